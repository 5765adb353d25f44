// Shared by the files of SubgameSolver's CFR updates (not part of its interface).
#pragma once

#include <cstdint>

#include "solvers/subgame_solver.h"

namespace rebel::detail {

// Regret order of a node never updated; orders saturate one below it.
constexpr uint16_t kNeverUpdated = 0xFFFF;
constexpr uint16_t kMaxOrder = 0xFFFE;

struct Discounts {
  double pos = 1.0, neg = 1.0, strat = 1.0;  // positive / negative regrets, average sum
  bool floor_regrets = false;                // CFR+
};

// Below a chance node, a hand an outcome makes impossible (factor 0) has no leading order:
// it is not a tremble but never reached, so its order is kMaxOrder there (it never leads a
// node's lowest order). `factors` and `orders` point at the first child's H entries.
inline void mark_impossible(int H, int num_children, const double* factors, uint16_t* orders) {
  for (size_t i = 0; i < static_cast<size_t>(num_children) * H; ++i) {
    if (factors[i] == 0.0) orders[i] = kMaxOrder;
  }
}

// Discounts applied after update number t of a player (t = number of policies already in
// the average).
Discounts discounts_after(const SolverParams& params, int t_update);

}  // namespace rebel::detail
