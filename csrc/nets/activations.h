// Row-wise LayerNorm followed by the exact (erf) GELU, matching torch.nn.LayerNorm
// (biased variance, eps inside the square root) and torch.nn.GELU(approximate="none").
#pragma once

namespace rebel {

// In place on rows [0, rows) of `y` (row stride ldy), each of n features:
//   z = (y - mean) / sqrt(var + eps) * gamma + beta;  y = z * Phi(z) = z/2 (1 + erf(z/sqrt2)).
void layer_norm_gelu(float* y, long ldy, int rows, int n, const float* gamma, const float* beta, float eps);

// GELU(z) = z/2 (1 + erf(z / sqrt2)) exactly as the vector kernel computes it (erf to
// ~4e-7 absolute in float32); used for row tails.
float gelu_erf(float z);

}  // namespace rebel
