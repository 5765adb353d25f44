// bfloat16 Linear layers for the MLP's hidden layers: weights rounded once (round to nearest
// even) to bf16 when loaded, activations rounded to bf16 at each layer input, products
// accumulated in float32. LayerNorm, GELU and the value head stay in float32 (mlp.cc).
//
// Two kernels, picked at run time by CPU feature (no -march flag needed; code for an
// instruction set this CPU lacks is never executed):
//   "amx"        AMX-BF16 tile multiply (TDPBF16PS): Intel Sapphire Rapids and later.
//   "avx512bf16" AVX512_BF16 dot products (VDPBF16PS) in an 8 x 32 register tile: AMD Zen 4
//                and later, Intel Cooper Lake. (On Intel cores with AMX, VDPBF16PS issues at
//                half the fp32 FMA rate, so there AMX is the bf16 kernel to use.)
// Both read the same packed weights: panels of 32 output columns, each stored as
// [padded_in / 2][32][2] (k pairs interleaved: the VNNI layout that VDPBF16PS and AMX's B
// tiles expect), padded_in a multiple of 32 and zero-filled.
//
// Rounding: each product of two bf16 values is exact in float32; the hardware adds them into
// float32 accumulators with round-to-nearest-even, flushing float32 denormals to zero, in an
// order of its own (pairs, tiles). tests/test_mlp_bf16.py checks both kernels against an
// exact (float64) reference of the same bf16-rounded operands to a stated bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nets/aligned.h"

namespace rebel {

using AlignedBf16 = std::vector<uint16_t, AlignedAllocator<uint16_t>>;

inline constexpr int kBf16PanelCols = 32;  // output columns per packed weight panel
inline constexpr int kBf16KBlock = 32;     // padded_in is a multiple of this (one AMX A-tile row)
inline constexpr int kBf16BlockRows = 16;  // rows of an activation block (one AMX tile)

// float -> bf16 bits as VCVTNEPS2BF16 rounds: to nearest even, denormals to +-0, NaN stays a
// (quiet) NaN, overflow gives +-inf.
uint16_t float_to_bf16(float x);
float bf16_to_float(uint16_t b);

struct Bf16Kernel {
  // y[r][0..panels * 32) = bias + a[r] . W^T for r < kBf16BlockRows (AMX computes the whole
  // block; the others stop at `rows`). a: bf16 rows of stride lda, k_pad columns (zero past
  // `in`). y: float rows of stride ldy, room for kBf16BlockRows rows.
  using LinearFn = void (*)(const uint16_t* a, long lda, int rows, int in, int k_pad, const uint16_t* packed,
                            const float* bias, int panels, float* y, long ldy);
  const char* isa;  // "amx" or "avx512bf16"
  LinearFn linear;
  void (*begin)();  // once per forward call on the calling thread (AMX: load the tile config)
  void (*end)();    // (AMX: release the tiles)
};

// The fastest bf16 kernel of this CPU for isa == "auto", otherwise the named one. Throws
// std::invalid_argument naming the problem for an unknown name or one this CPU cannot run.
const Bf16Kernel& bf16_kernel(const std::string& isa);

// bf16 kernels this CPU can run, fastest first (may be empty).
std::vector<std::string> supported_bf16_isas();

// Calls kernel.begin() / kernel.end() around a scope.
class Bf16Scope {
 public:
  explicit Bf16Scope(const Bf16Kernel& kernel) : kernel_(kernel) { kernel_.begin(); }
  ~Bf16Scope() { kernel_.end(); }
  Bf16Scope(const Bf16Scope&) = delete;
  Bf16Scope& operator=(const Bf16Scope&) = delete;

 private:
  const Bf16Kernel& kernel_;
};

// One Linear layer in bf16, packed for the kernels above.
class Bf16Linear {
 public:
  // Packs bf16(weight) x weight_scale, a power of two (so the scaling is exact, short of
  // products that fall in bf16's denormal range, which become 0): 0.5 where the input arrives
  // doubled (GeluFit::kBf16Doubled). The bias is not scaled. Throws std::invalid_argument if a
  // weight is too large for bf16 (rounds to inf) or weight_scale is not a power of two.
  Bf16Linear(const Bf16Kernel& kernel, const float* weight, const float* bias, int out, int in,
             float weight_scale = 1.0f);

  int in() const { return in_; }
  int out() const { return out_; }
  int padded_in() const { return k_pad_; }
  int padded_out() const { return panels_ * kBf16PanelCols; }
  const Bf16Kernel& kernel() const { return *kernel_; }

  // y[r][0..padded_out) = bias + a[r] W^T; `a` has kBf16BlockRows rows of padded_in() bf16,
  // zero past in() (rows_to_bf16_avx512, layer_norm_gelu_avx512).
  void forward(const uint16_t* a, int rows, float* y, long ldy) const;

 private:
  const Bf16Kernel* kernel_;
  int in_, out_, k_pad_, panels_;
  AlignedBf16 weight_;  // panels_ x (k_pad_ / 2) x 32 x 2
  AlignedFloats bias_;  // panels_ x 32, float32
};

}  // namespace rebel
