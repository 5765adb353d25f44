// Beliefs from reach vectors: normalisation, the off-path modes' leading-order terms, validation.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "solvers/subgame_solver.h"

namespace rebel {

void normalize_beliefs(const double* in, int H, double* out) {
  double total = 0.0;
  for (int h = 0; h < H; ++h) total += in[h];
  if (total > 0.0) {
    for (int h = 0; h < H; ++h) out[h] = in[h] / total;
  } else {
    for (int h = 0; h < H; ++h) out[h] = 1.0 / H;
  }
}

void normalize_reach(const double* coef, const uint16_t* order, int H, OffPath mode, double* out) {
  if (mode == OffPath::kSkip) {
    normalize_beliefs(coef, H, out);
    return;
  }
  uint16_t lowest = order[0];
  for (int h = 1; h < H; ++h) lowest = std::min(lowest, order[h]);
  if (mode == OffPath::kFloor && lowest == 1) {
    // (x + eps) / sum(x + eps) with x = coef * eps (order 1) or o(eps) (order 2 and more).
    double total = 0.0;
    for (int h = 0; h < H; ++h) total += (order[h] == 1 ? coef[h] : 0.0) + 1.0;
    for (int h = 0; h < H; ++h) out[h] = ((order[h] == 1 ? coef[h] : 0.0) + 1.0) / total;
    return;
  }
  double total = 0.0;
  if (mode == OffPath::kConditional || lowest == 0) {
    for (int h = 0; h < H; ++h) total += order[h] == lowest ? coef[h] : 0.0;
  }
  if (total > 0.0) {
    for (int h = 0; h < H; ++h) out[h] = order[h] == lowest ? coef[h] / total : 0.0;
  } else {
    for (int h = 0; h < H; ++h) out[h] = 1.0 / H;
  }
}

std::vector<double> checked_beliefs(const std::vector<double>& beliefs, int H, const char* what) {
  if (static_cast<int>(beliefs.size()) != H) {
    std::ostringstream msg;
    msg << what << " has length " << beliefs.size() << ", expected " << H << " (one per hand)";
    throw std::invalid_argument(msg.str());
  }
  double total = 0.0, largest = 0.0;
  for (int h = 0; h < H; ++h) {
    if (!std::isfinite(beliefs[h]) || beliefs[h] < 0.0) {
      std::ostringstream msg;
      msg << what << "[" << h << "] = " << beliefs[h] << "; beliefs must be finite and non-negative";
      throw std::invalid_argument(msg.str());
    }
    total += beliefs[h];
    largest = std::max(largest, beliefs[h]);
  }
  if (!(total > 0.0)) throw std::invalid_argument(std::string(what) + " has zero total mass");
  std::vector<double> out(H);
  // Finite entries can sum to inf (e.g. 1e308 each): normalise the entries scaled by the
  // largest one instead, which sums to at most H.
  const double scale = std::isinf(total) ? largest : 1.0;
  if (scale != 1.0) {
    total = 0.0;
    for (int h = 0; h < H; ++h) total += beliefs[h] / scale;
  }
  for (int h = 0; h < H; ++h) out[h] = beliefs[h] / scale / total;
  return out;
}
}  // namespace rebel
