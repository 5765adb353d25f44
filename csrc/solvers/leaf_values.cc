// The values at the leaves of a subgame for the updating player: terminal values from the
// opponent's reach, pseudo-leaf values from one batched value-net call per iteration.
#include <algorithm>
#include <cmath>

#include "core/tree_ops.h"
#include "solvers/subgame_solver.h"

namespace rebel {

// Terminal values from the opponent's reach; pseudo-leaf values from the net, queried
// with both players' normalised reaches (reach_ must hold the policy being evaluated)
// and scaled by the opponent's mass. Off-path modes: the opponent's reach is its
// lowest-order term at each node (opp_leading_, filled by cfr_step_orders), beliefs are
// normalised by normalize_reach, and the values of node n are the coefficients of its
// order node_order_[n].
void SubgameSolver::compute_leaf_values(int player) {
  const int opp = 1 - player;
  const bool orders = tracks_orders();
  const std::vector<double>& opp_reach = orders ? opp_leading_ : reach_[opp];
  fill_terminal_values(*game_, *tree_, player, opp_reach, &values_);
  const int L = static_cast<int>(tree_->pseudo_leaves.size());
  if (L == 0) return;
  const int row = batch_.row_size;

  // A leaf the opponent reaches with zero mass has value exactly 0 for `player` (the net's
  // values are scaled by that mass), so it is not queried: regret matching plays many
  // actions with probability exactly 0, and the net is nearly all of a subgame's cost.
  // kFloor does not query leaves of order 2 or more either: regret matching never sees them.
  queried_leaves_.clear();
  int cached = 0;
  batch_.queried_player.clear();
  batch_.histories.clear();
  batch_.beliefs0.clear();
  batch_.beliefs1.clear();
  for (int i = 0; i < L; ++i) {
    const size_t n = static_cast<size_t>(tree_->pseudo_leaves[i]);
    double mass = 0.0;
    for (int h = 0; h < H_; ++h) mass += opp_reach[n * H_ + h];
    const bool beyond_floor = orders && params_.off_path == OffPath::kFloor && node_order_[n] >= 2;
    if (beyond_floor || !(mass > 0.0)) {
      for (int h = 0; h < H_; ++h) values_[n * H_ + h] = 0.0;
      continue;
    }
    // One hand per player (perfect information): the beliefs are always the point mass,
    // so a leaf's query row never changes and the net is asked once per leaf and player.
    if (!single_hand_values_.empty() && !std::isnan(single_hand_values_[static_cast<size_t>(i) * 2 + player])) {
      values_[n] = mass * single_hand_values_[static_cast<size_t>(i) * 2 + player];
      ++cached;
      continue;
    }
    const size_t j = queried_leaves_.size();
    queried_leaves_.push_back({static_cast<int>(n), i, mass});
    float* r = &query_rows_[j * row];
    std::copy_n(&leaf_rows_[static_cast<size_t>(i) * row], row, r);
    r[1] = static_cast<float>(player);
    double* b = &query_beliefs_[j * 2 * H_];
    for (int p = 0; p < 2; ++p) {
      if (orders) normalize_reach(&reach_[p][n * H_], &orders_[p][n * H_], H_, params_.off_path, b + p * H_);
      else normalize_beliefs(&reach_[p][n * H_], H_, b + p * H_);
    }
    write_query_beliefs(*game_, b, b + H_, r);
    batch_.queried_player.push_back(player);
    batch_.histories.push_back(&tree_->history[n]);
    batch_.beliefs0.push_back(b);
    batch_.beliefs1.push_back(b + H_);
  }
  batch_.size = static_cast<int>(queried_leaves_.size());
  leaf_queries_ += batch_.size;
  leaf_queries_skipped_ += L - batch_.size - cached;
  if (batch_.size == 0) return;
  net_->compute_values(batch_, leaf_out_.data());
  for (int j = 0; j < batch_.size; ++j) {
    const auto [n, leaf, mass] = queried_leaves_[j];
    for (int h = 0; h < H_; ++h)
      values_[static_cast<size_t>(n) * H_ + h] = mass * leaf_out_[static_cast<size_t>(j) * H_ + h];
    if (!single_hand_values_.empty()) single_hand_values_[static_cast<size_t>(leaf) * 2 + player] = leaf_out_[j];
  }
}
}  // namespace rebel
