// Vectorised passes over a public tree shared by the solvers, best response and search.
// Arrays are [num_nodes * num_hands], policies use the child-indexed layout of tree.h.
#pragma once

#include <vector>

#include "core/game.h"
#include "core/tree.h"

namespace rebel {

// reach[n*H + h] = root_reach[h] * product of `player`'s policy along the path to n.
void compute_reach(const PublicTree& tree, int H, const std::vector<double>& policy, int player,
                   const double* root_reach, std::vector<double>* reach);

// Writes the terminal values of `player` (see game.h) into values[n*H ...] for every
// terminal node n, using the opponent's reach at that node.
void fill_terminal_values(const Game& game, const PublicTree& tree, int player,
                          const std::vector<double>& opp_reach, std::vector<double>* values);

// Bottom-up pass: `player` follows `policy`, the opponent's reach is already inside the
// leaf values, so opponent nodes sum their children. Leaves must be filled beforehand.
void backup_policy_values(const PublicTree& tree, int H, const std::vector<double>& policy,
                          int player, std::vector<double>* values);

// Bottom-up pass where `player` best-responds (per hand). If best_child is non-null it
// receives, for each of `player`'s decision nodes n and hand h, the chosen child at
// (*best_child)[n*H + h] (ties: the lowest action id).
void backup_best_response(const PublicTree& tree, int H, int player, std::vector<double>* values,
                          std::vector<int>* best_child);

// Normalises a reach-weighted policy sum into a policy (uniform where the sum is zero).
void normalize_policy(const PublicTree& tree, int H, const std::vector<double>& sum,
                      std::vector<double>* policy, int only_player = -1);

// Checks that `policy` has the right size, finite non-negative entries and sums to 1
// (within 1e-6) at every decision node and hand; throws std::invalid_argument otherwise.
void validate_policy(const PublicTree& tree, int H, const std::vector<double>& policy);

}  // namespace rebel
