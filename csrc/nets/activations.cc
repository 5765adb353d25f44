#include "nets/activations.h"

#include <cmath>

#include "util/cpu_features.h"
#include "util/simd.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

// The project builds with -ffp-contract=off so that the solvers' CPU clones round alike.
// The net is compared with torch to a tolerance rather than bit for bit, so here the
// polynomial's multiply-adds may fuse (about a third fewer vector operations).
#pragma GCC optimize("fp-contract=fast")

namespace rebel {

namespace {

using namespace gelu_erf_fit;
using simd::kLanes;
using simd::v16f;

}  // namespace

float gelu_erf(float z) {
  float e;  // erf(z / sqrt2)
  if (!(z < kClamp)) {
    e = 1.0f;  // NaN also lands here and propagates through h
  } else if (!(z > -kClamp)) {
    e = -1.0f;
  } else {
    const float s = z * z;
    const float p = ((((kP5 * s + kP4) * s + kP3) * s + kP2) * s + kP1) * s + kP0;
    const float q = ((((kQ5 * s + kQ4) * s + kQ3) * s + kQ2) * s + kQ1) * s + 1.0f;
    e = z * p / q;
  }
  const float h = 0.5f * z;
  return h + h * e;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace {

// The portable kernel: one clone per instruction set. On AVX2 (no AVX-512) GCC lowers its
// 16-lane selects lane by lane through the stack, which made it slower than the whole GEMM
// on Zen 3 (perf: 34% of the forward against 25%); layer_norm_gelu_avx2 below replaces that clone.
REBEL_SIMD_CLONES
void layer_norm_gelu_portable(float* y, long ldy, int rows, int n, const float* gamma, const float* beta,
                              float eps) {
  const int nv = n - n % kLanes;
  const float inv_n = 1.0f / static_cast<float>(n);
  for (int r = 0; r < rows; ++r) {
    float* row = y + r * ldy;
    v16f acc = {};
    int k = 0;
    for (; k < nv; k += kLanes) acc += simd::load(row + k);
    float sum = simd::hsum(acc);
    for (; k < n; ++k) sum += row[k];
    const float mean = sum * inv_n;

    // Two-pass variance: exact enough for large-magnitude inputs, unlike E[x^2] - E[x]^2.
    acc = v16f{};
    for (k = 0; k < nv; k += kLanes) {
      const v16f d = simd::load(row + k) - mean;
      acc += d * d;
    }
    float sq = simd::hsum(acc);
    for (; k < n; ++k) sq += (row[k] - mean) * (row[k] - mean);
    const float rstd = 1.0f / std::sqrt(sq * inv_n + eps);

    for (k = 0; k < nv; k += kLanes) {
      const v16f z = (simd::load(row + k) - mean) * rstd * simd::load(gamma + k) + simd::load(beta + k);
      // GELU(z) = h + h erf(z / sqrt2), h = z / 2; erf is odd, so no sign juggling.
      const auto below = z < kClamp, above = z > -kClamp;
      v16f zc = below ? z : kClamp;
      zc = above ? zc : -kClamp;
      const v16f s = zc * zc;
      const v16f p = ((((kP5 * s + kP4) * s + kP3) * s + kP2) * s + kP1) * s + kP0;
      const v16f q = ((((kQ5 * s + kQ4) * s + kQ3) * s + kQ2) * s + kQ1) * s + 1.0f;
      v16f e = zc * p / q;
      e = below ? e : 1.0f;
      e = above ? e : -1.0f;
      const v16f h = 0.5f * z;
      simd::store(row + k, h + h * e);
    }
    for (; k < n; ++k) row[k] = gelu_erf((row[k] - mean) * rstd * gamma[k] + beta[k]);
  }
}

#if defined(__x86_64__)

// Sum of 16 lanes held as lanes 0-7 (lo) and 8-15 (hi), in simd::hsum's order.
__attribute__((target("avx2,fma"), always_inline)) inline float hsum16(__m256 lo, __m256 hi) {
  const __m256 s8 = _mm256_add_ps(lo, hi);
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  float f[4];
  _mm_storeu_ps(f, s4);
  return (f[0] + f[1]) + (f[2] + f[3]);
}

// The same computation as the portable kernel in AVX2 intrinsics (two 8-lane halves per
// 16 features, the same reduction order and the same fit), selects as blends.
__attribute__((target("avx2,fma"))) void layer_norm_gelu_avx2(float* y, long ldy, int rows, int n,
                                                              const float* gamma, const float* beta, float eps) {
  const int nv = n - n % kLanes;
  const float inv_n = 1.0f / static_cast<float>(n);
  const __m256 clamp = _mm256_set1_ps(kClamp), neg_clamp = _mm256_set1_ps(-kClamp);
  const __m256 one = _mm256_set1_ps(1.0f), neg_one = _mm256_set1_ps(-1.0f), half = _mm256_set1_ps(0.5f);
  for (int r = 0; r < rows; ++r) {
    float* row = y + r * ldy;
    __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
    int k = 0;
    for (; k < nv; k += kLanes) {
      lo = _mm256_add_ps(lo, _mm256_loadu_ps(row + k));
      hi = _mm256_add_ps(hi, _mm256_loadu_ps(row + k + 8));
    }
    float sum = hsum16(lo, hi);
    for (; k < n; ++k) sum += row[k];
    const float mean = sum * inv_n;
    const __m256 vmean = _mm256_set1_ps(mean);

    lo = _mm256_setzero_ps();
    hi = _mm256_setzero_ps();
    for (k = 0; k < nv; k += kLanes) {
      const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(row + k), vmean);
      const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(row + k + 8), vmean);
      lo = _mm256_fmadd_ps(d0, d0, lo);
      hi = _mm256_fmadd_ps(d1, d1, hi);
    }
    float sq = hsum16(lo, hi);
    for (; k < n; ++k) sq += (row[k] - mean) * (row[k] - mean);
    const float rstd = 1.0f / std::sqrt(sq * inv_n + eps);
    const __m256 vrstd = _mm256_set1_ps(rstd);

    for (k = 0; k < nv; k += 8) {
      const __m256 x = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(row + k), vmean), vrstd);
      const __m256 z = _mm256_fmadd_ps(x, _mm256_loadu_ps(gamma + k), _mm256_loadu_ps(beta + k));
      const __m256 below = _mm256_cmp_ps(z, clamp, _CMP_LT_OQ), above = _mm256_cmp_ps(z, neg_clamp, _CMP_GT_OQ);
      const __m256 zc = _mm256_blendv_ps(neg_clamp, _mm256_blendv_ps(clamp, z, below), above);
      const __m256 s = _mm256_mul_ps(zc, zc);
      __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(kP5), s, _mm256_set1_ps(kP4));
      p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(kP3));
      p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(kP2));
      p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(kP1));
      p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(kP0));
      __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(kQ5), s, _mm256_set1_ps(kQ4));
      q = _mm256_fmadd_ps(q, s, _mm256_set1_ps(kQ3));
      q = _mm256_fmadd_ps(q, s, _mm256_set1_ps(kQ2));
      q = _mm256_fmadd_ps(q, s, _mm256_set1_ps(kQ1));
      q = _mm256_fmadd_ps(q, s, one);
      __m256 e = _mm256_div_ps(_mm256_mul_ps(zc, p), q);
      e = _mm256_blendv_ps(neg_one, _mm256_blendv_ps(one, e, below), above);
      const __m256 h = _mm256_mul_ps(half, z);
      _mm256_storeu_ps(row + k, _mm256_fmadd_ps(h, e, h));
    }
    for (; k < n; ++k) row[k] = gelu_erf((row[k] - mean) * rstd * gamma[k] + beta[k]);
  }
}

#endif

}  // namespace

void layer_norm_gelu(float* y, long ldy, int rows, int n, const float* gamma, const float* beta, float eps) {
#if defined(__x86_64__)
  static const bool avx2_only = cpu_features().avx2_fma && !cpu_features().avx512f;
  if (avx2_only) return layer_norm_gelu_avx2(y, ldy, rows, n, gamma, beta, eps);
#endif
  layer_norm_gelu_portable(y, ldy, rows, n, gamma, beta, eps);
}

#pragma GCC diagnostic pop

}  // namespace rebel
