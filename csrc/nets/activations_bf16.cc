// LayerNorm + GELU and float -> bf16 conversion for the bf16 and int16 paths, in AVX-512 (F, BW,
// VL) intrinsics (declared in activations.h). The float32 path keeps activations.cc, which is
// portable. The bf16 rounding has two forms with the same bits: VCVTNEPS2BF16 where the CPU has
// AVX512_BF16 (one instruction per 16 floats), and integer operations (about ten) elsewhere, so
// the int16 path, and the AMX kernel with avx512bf16 hidden, run on AVX-512 F/BW/VL alone.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "nets/activations.h"
#include "util/cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define REBEL_AVX512_ACTIVATIONS 1
// GCC 12's AVX-512 headers build unmasked intrinsics on a self-initialised "undefined"
// vector, which -Wmaybe-uninitialized reports once inlined (a known false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#else
#define REBEL_AVX512_ACTIVATIONS 0
#endif

namespace rebel {

#if REBEL_AVX512_ACTIVATIONS

namespace {

using namespace gelu_erf_fit;

__mmask16 tail_mask(int remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << remaining) - 1u);
}

// 16 floats -> 16 bf16: round to nearest even, denormals to +-0, NaN stays a (quiet) NaN: what
// VCVTNEPS2BF16 does, in integer operations (float_to_bf16 is the scalar twin).
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline __m256i to_bf16(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  const __mmask16 denormal = _mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7f800000));
  r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(u, _mm512_set1_epi32(0x400000)));
  r = _mm512_mask_mov_epi32(r, denormal, _mm512_and_si512(u, _mm512_set1_epi32(static_cast<int>(0x80000000u))));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
}

// The same conversion in one instruction; only ever called behind cpu_features().avx512bf16.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"), always_inline)) inline __m256i to_bf16_instruction(
    __m512 v) {
  return (__m256i)_mm512_cvtneps_pbh(v);
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) void zero_rows(uint16_t* out, int from, int to, int n_pad) {
  if (from < to) std::fill(out + static_cast<long>(from) * n_pad, out + static_cast<long>(to) * n_pad, uint16_t{0});
}

__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline __m512 gelu(__m512 z) {
  const __m512 clamp = _mm512_set1_ps(kClamp);
  const __m512 zc = _mm512_max_ps(_mm512_min_ps(z, clamp), _mm512_set1_ps(-kClamp));
  const __m512 s = _mm512_mul_ps(zc, zc);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kP5), s, _mm512_set1_ps(kP4));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(kP3));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(kP2));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(kP1));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(kP0));
  __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(kQ5), s, _mm512_set1_ps(kQ4));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(kQ3));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(kQ2));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(kQ1));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(1.0f));
  // q >= 1: rcp14 (relative error < 2^-14) and one Newton step (< 2^-23 or so).
  __m512 rq = _mm512_rcp14_ps(q);
  rq = _mm512_mul_ps(rq, _mm512_fnmadd_ps(q, rq, _mm512_set1_ps(2.0f)));
  __m512 e = _mm512_mul_ps(_mm512_mul_ps(zc, p), rq);
  // At the clamp the fit is within 4e-8 of +-1: above it h + h e is z to float32's rounding,
  // below it the result is set to 0 (the true value is above -6e-8 there; h + h e would be
  // z times 2e-8, large for a huge negative z). NaN propagates through h (min/max return the
  // clamp for NaN, the compare is true).
  const __m512 h = _mm512_mul_ps(_mm512_set1_ps(0.5f), z);
  const __mmask16 above = _mm512_cmp_ps_mask(z, _mm512_set1_ps(-kClamp), _CMP_NLE_UQ);  // z > -c, or NaN
  return _mm512_maskz_fmadd_ps(above, h, e, h);
}

// GELU with gelu_bf16_fit (activations.h): z/2 (Q + zc P) / Q with a bare VRCP14PS, and 0 below
// -kClamp. Seven multiply-adds and a reciprocal against gelu()'s eleven, a reciprocal and a
// Newton step. NaN propagates through h (min/max return the clamp for NaN, the compare is true).
// kDoubled: 2 GELU(z), without the multiply by 1/2 (GeluFit::kBf16Doubled).
template <bool kDoubled>
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline __m512 gelu_bf16_grade(__m512 z) {
  constexpr float kClampBf16 = gelu_bf16_fit::kClamp;
  const __m512 zc = _mm512_max_ps(_mm512_min_ps(z, _mm512_set1_ps(kClampBf16)), _mm512_set1_ps(-kClampBf16));
  const __m512 s = _mm512_mul_ps(zc, zc);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(gelu_bf16_fit::kP3), s, _mm512_set1_ps(gelu_bf16_fit::kP2));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(gelu_bf16_fit::kP1));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(gelu_bf16_fit::kP0));
  __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(gelu_bf16_fit::kQ3), s, _mm512_set1_ps(gelu_bf16_fit::kQ2));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(gelu_bf16_fit::kQ1));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(1.0f));
  const __m512 numerator = _mm512_fmadd_ps(zc, p, q);  // Q (1 + erf)
  const __m512 h = kDoubled ? z : _mm512_mul_ps(_mm512_set1_ps(0.5f), z);
  const __mmask16 above = _mm512_cmp_ps_mask(z, _mm512_set1_ps(-kClampBf16), _CMP_NLE_UQ);  // z > -c, or NaN
  return _mm512_maskz_mul_ps(above, _mm512_mul_ps(h, numerator), _mm512_rcp14_ps(q));
}

constexpr int kStatRows = 16;

// Sum of row[0, n) in four accumulators (named, so they stay in registers).
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline float row_sum(const float* row, int n) {
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
  int k = 0;
  for (; k + 64 <= n; k += 64) {
    a0 = _mm512_add_ps(a0, _mm512_loadu_ps(row + k));
    a1 = _mm512_add_ps(a1, _mm512_loadu_ps(row + k + 16));
    a2 = _mm512_add_ps(a2, _mm512_loadu_ps(row + k + 32));
    a3 = _mm512_add_ps(a3, _mm512_loadu_ps(row + k + 48));
  }
  for (; k < n; k += 16) a0 = _mm512_add_ps(a0, _mm512_maskz_loadu_ps(tail_mask(n - k), row + k));
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

// Sum of (row[k] - mean)^2 over [0, n), the same way.
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline float row_squared_deviation(
    const float* row, int n, float mean_value) {
  const __m512 mean = _mm512_set1_ps(mean_value);
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
  int k = 0;
  for (; k + 64 <= n; k += 64) {
    const __m512 d0 = _mm512_sub_ps(_mm512_loadu_ps(row + k), mean);
    const __m512 d1 = _mm512_sub_ps(_mm512_loadu_ps(row + k + 16), mean);
    const __m512 d2 = _mm512_sub_ps(_mm512_loadu_ps(row + k + 32), mean);
    const __m512 d3 = _mm512_sub_ps(_mm512_loadu_ps(row + k + 48), mean);
    a0 = _mm512_fmadd_ps(d0, d0, a0);
    a1 = _mm512_fmadd_ps(d1, d1, a1);
    a2 = _mm512_fmadd_ps(d2, d2, a2);
    a3 = _mm512_fmadd_ps(d3, d3, a3);
  }
  for (; k < n; k += 16) {
    const __mmask16 m = tail_mask(n - k);
    const __m512 d = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, row + k), mean);
    a0 = _mm512_fmadd_ps(d, d, a0);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

// Mean and 1/sqrt(var + eps) of rows [r0, r0 + nr) (nr <= kStatRows): every row's sum first,
// then the squared deviations, so the rows' short reductions overlap instead of each waiting
// on the one before.
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline void row_statistics(
    const float* y, long ldy, int r0, int nr, int n, float eps, float* means, float* rstds) {
  const float inv_n = 1.0f / static_cast<float>(n);
  for (int r = 0; r < nr; ++r) means[r] = row_sum(y + (r0 + r) * ldy, n) * inv_n;
  for (int r = 0; r < nr; ++r)
    rstds[r] = 1.0f / std::sqrt(row_squared_deviation(y + (r0 + r) * ldy, n, means[r]) * inv_n + eps);
}

// 16 floats at p, or the first lanes of mask m (kFull: all 16, a plain load: masked loads and
// stores cost more than plain ones on AMD Zen 4).
template <bool kFull>
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline __m512 load16(const float* p, __mmask16 m) {
  if constexpr (kFull) {
    return _mm512_loadu_ps(p);
  } else {
    return _mm512_maskz_loadu_ps(m, p);
  }
}

// GELU(LayerNorm(row))[k, k + 16) under mask m, with the fit kFit.
template <GeluFit kFit, bool kFull>
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline __m512 normalised_gelu(
    const float* row, int k, __mmask16 m, __m512 mean, __m512 rstd, const float* gamma, const float* beta) {
  const __m512 x = load16<kFull>(row + k, m);
  const __m512 z = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_sub_ps(x, mean), rstd), load16<kFull>(gamma + k, m),
                                   load16<kFull>(beta + k, m));
  if constexpr (kFit == GeluFit::kBf16 || kFit == GeluFit::kBf16Doubled) {
    return gelu_bf16_grade<kFit == GeluFit::kBf16Doubled>(z);
  } else {
    return gelu(z);
  }
}

// Written out twice (AVX-512 F/BW/VL, and with AVX512_BF16 for the instruction): a helper
// compiled for the wider target cannot be inlined into the narrower one, and the rounding is
// in the innermost loop.
#define REBEL_LAYER_NORM_GELU_BODY(STORE)                                                              \
  for (int r0 = 0; r0 < rows; r0 += kStatRows) {                                                       \
    const int nr = std::min(kStatRows, rows - r0);                                                     \
    float means[kStatRows], rstds[kStatRows];                                                          \
    row_statistics(y, ldy, r0, nr, n, eps, means, rstds);                                              \
    for (int r = 0; r < nr; ++r) {                                                                     \
      float* row = y + (r0 + r) * ldy;                                                                 \
      const __m512 mean = _mm512_set1_ps(means[r]), rstd = _mm512_set1_ps(rstds[r]);                  \
      uint16_t* o = out16 ? out16 + static_cast<long>(r0 + r) * n_pad : nullptr;                       \
      int k = 0;                                                                                       \
      if (o) {                                                                                         \
        for (; k + 16 <= n; k += 16)                                                                   \
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + k),                                       \
                              STORE((normalised_gelu<kFit, true>(row, k, 0, mean, rstd, gamma, beta))));  \
      } else {                                                                                         \
        for (; k + 16 <= n; k += 16)                                                                   \
          _mm512_storeu_ps(row + k, normalised_gelu<kFit, true>(row, k, 0, mean, rstd, gamma, beta));  \
      }                                                                                                \
      if (k < n) {                                                                                     \
        const __mmask16 m = tail_mask(n - k);                                                          \
        const __m512 g = normalised_gelu<kFit, false>(row, k, m, mean, rstd, gamma, beta);             \
        if (o) {                                                                                       \
          _mm256_mask_storeu_epi16(o + k, m, STORE(g));                                                \
        } else {                                                                                       \
          _mm512_mask_storeu_ps(row + k, m, g);                                                        \
        }                                                                                              \
      }                                                                                                \
      if (o) std::fill(o + n, o + n_pad, uint16_t{0});                                                 \
    }                                                                                                  \
  }                                                                                                    \
  if (out16) zero_rows(out16, rows, block_rows, n_pad);

template <GeluFit kFit>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void layer_norm_gelu_integer_rounding(
    float* y, long ldy, int rows, int n, const float* gamma, const float* beta, float eps, uint16_t* out16, int n_pad,
    int block_rows) {
  REBEL_LAYER_NORM_GELU_BODY(to_bf16)
}

template <GeluFit kFit>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void layer_norm_gelu_instruction_rounding(
    float* y, long ldy, int rows, int n, const float* gamma, const float* beta, float eps, uint16_t* out16, int n_pad,
    int block_rows) {
  REBEL_LAYER_NORM_GELU_BODY(to_bf16_instruction)
}

#undef REBEL_LAYER_NORM_GELU_BODY

template <GeluFit kFit>
void layer_norm_gelu_rounded(bool instruction, float* y, long ldy, int rows, int n, const float* gamma,
                             const float* beta, float eps, uint16_t* out16, int n_pad, int block_rows) {
  if (instruction) return layer_norm_gelu_instruction_rounding<kFit>(y, ldy, rows, n, gamma, beta, eps, out16, n_pad,
                                                                     block_rows);
  layer_norm_gelu_integer_rounding<kFit>(y, ldy, rows, n, gamma, beta, eps, out16, n_pad, block_rows);
}

// 16 lanes -> 4 partial sums (lane i + lane i+8, then + the next 4), the first step of sum4.
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline __m128 fold_to_4(__m512 v) {
  const __m256 lo = _mm512_castps512_ps256(v);
  const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
  const __m256 s = _mm256_add_ps(lo, hi);
  return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
}

// Four 16-lane sums -> one 4-lane vector of their totals (a fixed order, the same for every row).
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline __m128 sum4(__m512 a, __m512 b, __m512 c,
                                                                                      __m512 d) {
  return _mm_hadd_ps(_mm_hadd_ps(fold_to_4(a), fold_to_4(b)), _mm_hadd_ps(fold_to_4(c), fold_to_4(d)));
}

// The last hidden layer's LayerNorm + GELU with the head's J outputs in the same pass: each
// 16-lane block of GELU values goes straight into J dot products (head weights row-major,
// [J][n]) and is never stored.
template <GeluFit kFit, int J>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void layer_norm_gelu_head(const float* y, long ldy, int rows, int n,
                                                                               const float* gamma, const float* beta,
                                                                               float eps, const float* w,
                                                                               const float* bias, float* out) {
  for (int r0 = 0; r0 < rows; r0 += kStatRows) {
    const int nr = std::min(kStatRows, rows - r0);
    float means[kStatRows], rstds[kStatRows];
    row_statistics(y, ldy, r0, nr, n, eps, means, rstds);
    for (int r = 0; r < nr; ++r) {
      const float* row = y + (r0 + r) * ldy;
      const __m512 mean = _mm512_set1_ps(means[r]), rstd = _mm512_set1_ps(rstds[r]);
      __m512 acc[J];
#pragma GCC unroll 16
      for (int j = 0; j < J; ++j) acc[j] = _mm512_setzero_ps();
      int k = 0;
      for (; k + 16 <= n; k += 16) {
        const __m512 g = normalised_gelu<kFit, true>(row, k, 0, mean, rstd, gamma, beta);
#pragma GCC unroll 16
        for (int j = 0; j < J; ++j) acc[j] = _mm512_fmadd_ps(g, _mm512_loadu_ps(w + j * n + k), acc[j]);
      }
      if (k < n) {  // masked lanes: the loads give 0, so the products do too
        const __mmask16 m = tail_mask(n - k);
        const __m512 g = normalised_gelu<kFit, false>(row, k, m, mean, rstd, gamma, beta);
#pragma GCC unroll 16
        for (int j = 0; j < J; ++j) acc[j] = _mm512_fmadd_ps(g, _mm512_maskz_loadu_ps(m, w + j * n + k), acc[j]);
      }
      float* o = out + static_cast<long>(r0 + r) * J;
      int j = 0;
#pragma GCC unroll 4
      for (; j + 4 <= J; j += 4)
        _mm_storeu_ps(o + j, _mm_add_ps(_mm_loadu_ps(bias + j), sum4(acc[j], acc[j + 1], acc[j + 2], acc[j + 3])));
#pragma GCC unroll 4
      for (; j < J; ++j) o[j] = bias[j] + _mm512_reduce_add_ps(acc[j]);
    }
  }
}

using FusedHeadFn = void (*)(const float*, long, int, int, const float*, const float*, float, const float*, const float*,
                             float*);

template <GeluFit kFit, int... Js>
constexpr std::array<FusedHeadFn, sizeof...(Js)> fused_head_table(std::integer_sequence<int, Js...>) {
  return {layer_norm_gelu_head<kFit, Js + 1>...};
}

#define REBEL_ROWS_TO_BF16_BODY(STORE)                                                                 \
  for (int r = 0; r < rows; ++r) {                                                                     \
    const float* xr = x + r * ldx;                                                                     \
    uint16_t* o = out + static_cast<long>(r) * n_pad;                                                  \
    for (int k = 0; k < n; k += 16) {                                                                  \
      const __mmask16 m = tail_mask(n - k);                                                            \
      _mm256_mask_storeu_epi16(o + k, m, STORE(_mm512_maskz_loadu_ps(m, xr + k)));                     \
    }                                                                                                  \
    std::fill(o + n, o + n_pad, uint16_t{0});                                                          \
  }                                                                                                    \
  zero_rows(out, rows, block_rows, n_pad);

__attribute__((target("avx512f,avx512bw,avx512vl"))) void rows_to_bf16_integer_rounding(
    const float* x, long ldx, int rows, int n, uint16_t* out, int n_pad, int block_rows) {
  REBEL_ROWS_TO_BF16_BODY(to_bf16)
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void rows_to_bf16_instruction_rounding(
    const float* x, long ldx, int rows, int n, uint16_t* out, int n_pad, int block_rows) {
  REBEL_ROWS_TO_BF16_BODY(to_bf16_instruction)
}

#undef REBEL_ROWS_TO_BF16_BODY

void require_rounding_supported(Bf16Rounding rounding) {
  if (rounding == Bf16Rounding::kInstruction && !cpu_features().avx512bf16)
    throw std::invalid_argument("bf16 rounding by instruction needs AVX512_BF16, which this CPU lacks (or "
                                "REBEL_CPU_DISABLE hides)");
}

}  // namespace

Bf16Rounding native_bf16_rounding() {
  return cpu_features().avx512bf16 ? Bf16Rounding::kInstruction : Bf16Rounding::kIntegerOps;
}

void layer_norm_gelu_avx512(float* y, long ldy, int rows, int n, const float* gamma, const float* beta, float eps,
                            uint16_t* out16, int n_pad, int block_rows, GeluFit fit, Bf16Rounding rounding) {
  require_rounding_supported(rounding);
  const bool instruction = out16 && rounding == Bf16Rounding::kInstruction;
  switch (fit) {
    case GeluFit::kBf16:
      return layer_norm_gelu_rounded<GeluFit::kBf16>(instruction, y, ldy, rows, n, gamma, beta, eps, out16,
                                                       n_pad, block_rows);
    case GeluFit::kBf16Doubled:
      return layer_norm_gelu_rounded<GeluFit::kBf16Doubled>(instruction, y, ldy, rows, n, gamma, beta, eps, out16,
                                                              n_pad, block_rows);
    case GeluFit::kFloat32:
      return layer_norm_gelu_rounded<GeluFit::kFloat32>(instruction, y, ldy, rows, n, gamma, beta, eps, out16,
                                                          n_pad, block_rows);
  }
  throw std::invalid_argument("unknown GELU fit");
}

void layer_norm_gelu_head_avx512(const float* y, long ldy, int rows, int n, const float* gamma, const float* beta,
                                 float eps, GeluFit fit, const float* head_weight, const float* head_bias, int outputs,
                                 float* out) {
  if (outputs < 1 || outputs > kFusedHeadMaxOutputs)
    throw std::invalid_argument("the fused head takes 1 to " + std::to_string(kFusedHeadMaxOutputs) + " outputs, not " +
                                std::to_string(outputs));
  if (fit != GeluFit::kBf16 && fit != GeluFit::kBf16Doubled)
    throw std::invalid_argument("the fused head runs the bf16 path's GELU fit only");
  static constexpr auto kPlain = fused_head_table<GeluFit::kBf16>(std::make_integer_sequence<int, kFusedHeadMaxOutputs>{});
  static constexpr auto kDoubled =
      fused_head_table<GeluFit::kBf16Doubled>(std::make_integer_sequence<int, kFusedHeadMaxOutputs>{});
  const auto& table = fit == GeluFit::kBf16 ? kPlain : kDoubled;
  table[static_cast<size_t>(outputs - 1)](y, ldy, rows, n, gamma, beta, eps, head_weight, head_bias, out);
}

void rows_to_bf16_avx512(const float* x, long ldx, int rows, int n, uint16_t* out, int n_pad, int block_rows,
                         Bf16Rounding rounding) {
  require_rounding_supported(rounding);
  if (rounding == Bf16Rounding::kInstruction) {
    rows_to_bf16_instruction_rounding(x, ldx, rows, n, out, n_pad, block_rows);
  } else {
    rows_to_bf16_integer_rounding(x, ldx, rows, n, out, n_pad, block_rows);
  }
}

#else

Bf16Rounding native_bf16_rounding() { return Bf16Rounding::kIntegerOps; }
void layer_norm_gelu_avx512(float*, long, int, int, const float*, const float*, float, uint16_t*, int, int, GeluFit,
                            Bf16Rounding) {
  throw std::logic_error("the bf16 path needs x86-64 AVX-512");
}
void layer_norm_gelu_head_avx512(const float*, long, int, int, const float*, const float*, float, GeluFit, const float*,
                                 const float*, int, float*) {
  throw std::logic_error("the bf16 path needs x86-64 AVX-512");
}
void rows_to_bf16_avx512(const float*, long, int, int, uint16_t*, int, int, Bf16Rounding) {
  throw std::logic_error("the bf16 path needs x86-64 AVX-512");
}

#endif

}  // namespace rebel
