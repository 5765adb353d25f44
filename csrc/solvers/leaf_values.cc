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
  // CFR-AVG: the leaf PBSs come from the average policy (reaches recomputed every update);
  // the current iterate's opponent mass still scales the values.
  const bool average_leaves = params_.leaf_beliefs != LeafBeliefs::kIterate;
  const bool sound_average = params_.leaf_beliefs == LeafBeliefs::kAverage;
  if (average_leaves) {
    const std::vector<double>& avg = average_policy();
    for (int p = 0; p < 2; ++p) compute_reach(*tree_, H_, avg, p, root_reach_[p].data(), &average_reach_[p]);
  }
  const auto& belief_reach = average_leaves ? average_reach_ : reach_;

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
    double belief_mass = mass;
    if (average_leaves) {
      belief_mass = 0.0;
      for (int h = 0; h < H_; ++h) belief_mass += average_reach_[opp][n * H_ + h];
    }
    // The sound CFR-AVG needs V(beta_bar^t) at every leaf the average reaches, for the
    // next update's difference, even where the current iterate's mass makes it worth 0.
    const bool needed = sound_average ? belief_mass > 0.0 : mass > 0.0 && belief_mass > 0.0;
    if (beyond_floor || !needed) {
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
      else normalize_beliefs(&belief_reach[p][n * H_], H_, b + p * H_);
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
  if (sound_average) combine_average_leaf_values(player);
  for (int j = 0; j < batch_.size; ++j) {
    const auto [n, leaf, mass] = queried_leaves_[j];
    for (int h = 0; h < H_; ++h)
      values_[static_cast<size_t>(n) * H_ + h] = mass * leaf_out_[static_cast<size_t>(j) * H_ + h];
    if (!single_hand_values_.empty()) {  // the net's own answer (the sound CFR-AVG's leaf_out_ is a difference)
      single_hand_values_[static_cast<size_t>(leaf) * 2 + player] =
          sound_average ? previous_leaf_values_[player][static_cast<size_t>(leaf)] : leaf_out_[j];
    }
  }
}
void SubgameSolver::combine_average_leaf_values(int player) {
  // Update t of `player` (1-based): its leaf values v_t make the weighted mean of
  // v_1..v_t equal V(beta_bar^t). Weights t (lcfr): sum_{s<=t} s = t(t+1)/2, so
  // v_t = ((t+1)/2) V_t - ((t-1)/2) V_(t-1); weights 1 (cfr): v_t = t V_t - (t-1) V_(t-1).
  const double t = steps_[player] + 1.0;
  const bool linear = params_.kind == SolverKind::kLinearCfr;
  const double now = linear ? (t + 1.0) / 2.0 : t, before = linear ? (t - 1.0) / 2.0 : t - 1.0;
  std::vector<double>& previous = previous_leaf_values_[player];
  for (int j = 0; j < batch_.size; ++j) {
    double* out = &leaf_out_[static_cast<size_t>(j) * H_];
    double* prev = &previous[static_cast<size_t>(queried_leaves_[j].leaf) * H_];
    for (int h = 0; h < H_; ++h) {
      const double v = out[h];
      out[h] = now * v - before * prev[h];
      prev[h] = v;
    }
  }
}
}  // namespace rebel
