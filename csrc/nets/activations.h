// Row-wise LayerNorm followed by the exact (erf) GELU, matching torch.nn.LayerNorm
// (biased variance, eps inside the square root) and torch.nn.GELU(approximate="none").
#pragma once

#include <cstdint>

namespace rebel {

namespace gelu_erf_fit {
// erf(z / sqrt2) ~= z P(z^2) / Q(z^2) for |z| <= kClamp: a degree-(5, 5) rational fit of
// our own (weighted least squares with Lawson reweighting towards minimax; max error
// 3.4e-8 in exact arithmetic, ~4e-7 evaluated in float32). Past kClamp, erf(z / sqrt2)
// rounds to +-1 in float32, which is also what the kernels return there.
inline constexpr float kClamp = 5.6f;
inline constexpr float kP0 = 7.978843882e-01f, kP1 = 6.702083779e-02f, kP2 = 9.307453577e-03f,
                       kP3 = 3.307641123e-04f, kP4 = 1.265777886e-05f, kP5 = 4.589641308e-08f;
inline constexpr float kQ1 = 2.506637413e-01f, kQ2 = 2.844413823e-02f, kQ3 = 1.863568035e-03f,
                       kQ4 = 7.259055913e-05f, kQ5 = 1.202069395e-06f;
}  // namespace gelu_erf_fit

namespace gelu_bf16_fit {
// The bf16 path's cheaper fit, for activations that are rounded to bf16 (8-bit significand,
// relative step 2^-8) or feed the float32 head after a bf16 layer: erf(z / sqrt2) ~= z P(z^2) /
// Q(z^2), degree (3, 3), for |z| <= kClamp (our own weighted least-squares fit with Lawson
// reweighting, on z in (0, 4.7], weighted by z because GELU's error is z/2 times erf's). GELU is
// evaluated as z/2 (Q + z P) / Q, so the cancellation for z < 0 happens in the numerator and the
// reciprocal's error stays relative to the result. In float32 with an exact division: max abs
// error 6.7e-6 against the erf GELU, relative 1.1e-5 for z > 0; with VRCP14PS (relative error
// below 2^-14): |error| <= 8e-5 |GELU(z)| + 7e-6 (tests/test_mlp_bf16.py), the relative part
// about 50x under bf16's rounding. Below -kClamp the result is 0 (the true value is above
// -6.2e-6 there).
inline constexpr float kClamp = 4.7f;
inline constexpr float kP0 = 7.978327274e-01f, kP1 = 5.603002384e-02f, kP2 = 7.603242062e-03f,
                       kP3 = 6.426862092e-05f;
inline constexpr float kQ1 = 2.367750704e-01f, kQ2 = 2.404765785e-02f, kQ3 = 1.140699722e-03f;
}  // namespace gelu_bf16_fit

// Which GELU fit the AVX-512 LayerNorm + GELU below evaluates.
enum class GeluFit {
  kFloat32,  // gelu_erf_fit, refined reciprocal: ~4e-7 absolute, float32 grade (the int16 path)
  kBf16,     // gelu_bf16_fit, bare reciprocal: relative 8e-5, for the bf16 path
  // kBf16's values times 2, one multiply fewer: GELU's factor 1/2 is left to the weights that
  // read the result (halved when packed: Bf16Linear's weight_scale, the fused head's weights).
  // Doubling is exact in floating point, so the layer after sees the same products, bit for bit
  // (short of values within a factor 2 of the denormal range, which the kernels flush to 0).
  kBf16Doubled,
};

// In place on rows [0, rows) of `y` (row stride ldy), each of n features:
//   z = (y - mean) / sqrt(var + eps) * gamma + beta;  y = z * Phi(z) = z/2 (1 + erf(z/sqrt2)).
void layer_norm_gelu(float* y, long ldy, int rows, int n, const float* gamma, const float* beta, float eps);

// GELU(z) = z/2 (1 + erf(z / sqrt2)) exactly as the vector kernel computes it (erf to
// ~4e-7 absolute in float32); used for row tails.
float gelu_erf(float z);

// How the AVX-512 code below rounds float32 to bf16 (nearest even, denormals to +-0, NaN kept
// and quieted): the same bits either way. kInstruction (VCVTNEPS2BF16) needs AVX512_BF16;
// kIntegerOps needs only AVX-512 F/BW/VL.
enum class Bf16Rounding { kIntegerOps, kInstruction };

// kInstruction where cpu_features().avx512bf16, else kIntegerOps.
Bf16Rounding native_bf16_rounding();

// The bf16 and int16 paths' LayerNorm + GELU (AVX-512 F/BW/VL; only called where a bf16 or
// int16 kernel runs, and every such CPU has it). GeluFit::kFloat32 is the float32 path's fit with
// a refined reciprocal in place of the division (relative error below 1e-6); GeluFit::kBf16 the
// cheaper gelu_bf16_fit (about half the vector operations). Writes the result
// as float32 in place when out16 is null, otherwise as bf16 to out16[r][0..n) (row stride
// n_pad, zero from n to n_pad); rows [rows, block_rows) of out16 are zeroed. A rounding this
// CPU cannot do throws std::invalid_argument.
void layer_norm_gelu_avx512(float* y, long ldy, int rows, int n, const float* gamma, const float* beta, float eps,
                            uint16_t* out16, int n_pad, int block_rows, GeluFit fit,
                            Bf16Rounding rounding = native_bf16_rounding());

// Most head outputs layer_norm_gelu_head_avx512 takes.
inline constexpr int kFusedHeadMaxOutputs = 16;

// The last hidden layer's LayerNorm + GELU (as layer_norm_gelu_avx512 with `fit`) and the
// head in one pass, without writing the activations: out[r][j] = head_bias[j] +
// sum_k GELU(LN(y[r]))[k] head_weight[j][k] for r < rows, j < outputs (head_weight row-major,
// [outputs][n]; out rows of `outputs` floats). The sums run in a fixed order, the same for
// every row. fit: kBf16 or kBf16Doubled (then pass the head's weights halved); outputs outside
// [1, kFusedHeadMaxOutputs] or another fit throws std::invalid_argument.
void layer_norm_gelu_head_avx512(const float* y, long ldy, int rows, int n, const float* gamma, const float* beta,
                                 float eps, GeluFit fit, const float* head_weight, const float* head_bias, int outputs,
                                 float* out);

// out[r][0..n) = bf16(x[r][0..n)), zero from n to n_pad, and rows [rows, block_rows) zeroed
// (AVX-512 F/BW/VL).
void rows_to_bf16_avx512(const float* x, long ldx, int rows, int n, uint16_t* out, int n_pad, int block_rows,
                         Bf16Rounding rounding = native_bf16_rounding());

}  // namespace rebel
