// Dense (Linear) layers for small MLPs: y = x W^T + b, W in torch layout [out][in], float32.
//
// Wide layers use a register-tiled GEMM: the weights are packed once into panels of `nr`
// output columns (k-major, zero-padded) and a micro-kernel keeps an mr x nr tile of
// outputs in vector registers over the whole reduction, broadcasting activations straight
// from their rows (packing them too measured slower at these sizes). Narrow layers (the value head, a few outputs) use per-row dot
// products instead, since padding them to a panel would waste most of the work.
//
// The instruction set is picked at run time (no -march=native): AVX-512, AVX2+FMA or a
// portable C++ fallback, see gemm_kernel().
#pragma once

#include <string>
#include <vector>

#include "nets/aligned.h"

namespace rebel {

inline constexpr int kMaxTileRows = 8;

// A register-tile kernel for one instruction set.
struct GemmKernel {
  // c[i][0..nr) (row stride ldc) = bias[0..nr) + sum_p a[i][p] * b_panel[p][0..nr) for
  // i < m, p < k, with a row-major (row stride lda).
  using TileFn = void (*)(int k, const float* a, long lda, const float* b_panel, const float* bias, float* c,
                          long ldc);
  const char* isa;  // "avx512", "avx2" or "generic"
  int mr;           // rows per full tile (<= kMaxTileRows)
  int nr;           // output columns per weight panel
  TileFn tiles[kMaxTileRows + 1];  // tiles[m] computes m rows, 1 <= m <= mr
};

// The fastest kernel this CPU supports for isa == "auto", otherwise the named one.
// Throws std::invalid_argument for an unknown name or one this CPU cannot run.
const GemmKernel& gemm_kernel(const std::string& isa);

// Instruction sets this CPU can run, fastest first (always ends with "generic").
std::vector<std::string> supported_isas();

// One Linear layer with many outputs, packed for a GemmKernel.
class PackedLinear {
 public:
  PackedLinear(const GemmKernel& kernel, const float* weight, const float* bias, int out, int in);

  int in() const { return in_; }
  int out() const { return out_; }
  // Row stride callers must give `y`: out rounded up to a whole panel.
  int padded_out() const { return panels_ * kernel_->nr; }
  // y[r][0..padded_out) = x[r] W^T + b for r < rows; columns >= out() come out as 0.
  void forward(const float* x, long ldx, int rows, float* y, long ldy) const;

 private:
  const GemmKernel* kernel_;
  int in_, out_, panels_;
  AlignedFloats weight_;  // panels_ x in_ x nr
  AlignedFloats bias_;    // panels_ x nr
};

// One Linear layer with few outputs (dot product per output), weights kept row-major.
class SmallLinear {
 public:
  SmallLinear(const float* weight, const float* bias, int out, int in);

  int in() const { return in_; }
  int out() const { return out_; }
  const float* bias() const { return bias_.data(); }

  // y[r][0..out) = x[r] W^T + b for r < rows.
  void forward(const float* x, long ldx, int rows, float* y, long ldy) const;

 private:
  int in_, out_;
  AlignedFloats weight_;  // out_ x in_
  AlignedFloats bias_;
};

}  // namespace rebel
