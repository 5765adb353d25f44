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

// Discounts applied after update number t of a player (t = number of policies already in
// the average).
Discounts discounts_after(const SolverParams& params, int t_update);

}  // namespace rebel::detail
