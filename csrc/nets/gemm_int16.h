// int16 Linear layers for the MLP's hidden-to-hidden layers, on AVX512_VNNI (VPDPWSSD: two
// int16 x int16 products added into each int32 lane per instruction, at the fp32 FMA's rate
// on the Intel cores measured: twice the products of float32 per cycle).
//
// Quantisation, symmetric, with one float32 scale per weight row and per activation row:
//   weights: s_w[o] = max_k |w[o][k]| / qmax, q_w[o][k] = rint(w[o][k] / s_w[o])   (once, at load)
//   inputs:  s_x[r] = max_k |x[r][k]| / qmax, q_x[r][k] = rint(x[r][k] * (qmax / max_k |x[r][k]|))
//   output:  y[r][o] = bias[o] + float(sum_k q_w[o][k] q_x[r][k]) * (s_w[o] * s_x[r])
// qmax = floor(sqrt((2^31 - 1) / in)) (2896 for in = 256; at most 32767), so no int32 sum can
// overflow whatever the values: the sums are exact integers, independent of the order the
// hardware adds them in, and tests/test_mlp_int16.py reproduces every q and every sum exactly
// in numpy. A row of zeros gets scale 0 (its products are all zero).
//
// Against bf16 (8-bit significands) this keeps about 12 bits per operand: on the trained
// 1x6f net's held-out queries the values moved by at most 0.0047 from float32 (bf16: 0.022).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nets/aligned.h"

namespace rebel {

using AlignedInt16 = std::vector<int16_t, AlignedAllocator<int16_t>>;

inline constexpr int kInt16PanelCols = 32;  // output columns per packed weight panel
inline constexpr int kInt16KBlock = 32;     // padded_in is a multiple of this
inline constexpr int kInt16BlockRows = 16;  // rows of an activation block

// The largest |q| of a layer with `in` inputs (see above).
int int16_qmax(int in);

struct Int16Kernel {
  // y[r][0..panels * 32) = bias + (q_a[r] . q_W^T) * (w_scale * a_scale[r]) for r < rows.
  // a: int16 rows of stride lda, zero past `in`; packed: panels of [k_pad / 2][32][2].
  using LinearFn = void (*)(const int16_t* a, long lda, const float* a_scale, int rows, int in, int k_pad,
                            const int16_t* packed, const float* w_scale, const float* bias, int panels, float* y,
                            long ldy);
  const char* isa;  // "avx512vnni"
  LinearFn linear;
};

// The int16 kernel of this CPU for isa == "auto" or "avx512vnni". Throws std::invalid_argument
// naming the problem for an unknown name or a CPU without AVX512_VNNI.
const Int16Kernel& int16_kernel(const std::string& isa);

// int16 kernels this CPU can run (may be empty).
std::vector<std::string> supported_int16_isas();

// q[r][0..n) and scale[r] of rows x[r][0..n) (stride ldx) as defined above, zero from n to
// n_pad; rows [rows, block_rows) are zeroed with scale 0. AVX-512 F/BW; only called where the
// int16 kernel runs.
void quantize_rows_int16(const float* x, long ldx, int rows, int n, int qmax, int16_t* q, int n_pad, float* scale,
                         int block_rows);

// One Linear layer in int16, packed for the kernel.
class Int16Linear {
 public:
  Int16Linear(const Int16Kernel& kernel, const float* weight, const float* bias, int out, int in);

  int in() const { return in_; }
  int out() const { return out_; }
  int qmax() const { return qmax_; }
  int padded_in() const { return k_pad_; }
  int padded_out() const { return panels_ * kInt16PanelCols; }

  // y[r][0..padded_out) for r < rows from quantized rows a (stride padded_in(), zero past
  // in()) and their scales.
  void forward(const int16_t* a, const float* a_scale, int rows, float* y, long ldy) const;

 private:
  const Int16Kernel* kernel_;
  int in_, out_, qmax_, k_pad_, panels_;
  AlignedInt16 weight_;    // panels_ x (k_pad_ / 2) x 32 x 2
  AlignedFloats w_scale_;  // panels_ x 32 (0 for padding columns)
  AlignedFloats bias_;     // panels_ x 32
};

}  // namespace rebel
