#include "nets/activations.h"

#include <cmath>

#include "nets/simd.h"

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

REBEL_SIMD_CLONES
void layer_norm_gelu(float* y, long ldy, int rows, int n, const float* gamma, const float* beta, float eps) {
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

#pragma GCC diagnostic pop

}  // namespace rebel
