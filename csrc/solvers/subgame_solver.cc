// SubgameSolver's driver: construction (policies, reaches, the uniform start in the average,
// the pseudo-leaf query rows), the step loop that dispatches to the CFR or FP update, the
// averaged root values and the average policy.
#include "solvers/subgame_solver.h"

#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/tree_ops.h"
#include "solvers/subgame_solver_internal.h"

namespace rebel {

using detail::kNeverUpdated;

SubgameSolver::SubgameSolver(GamePtr game, std::shared_ptr<const PublicTree> tree, Beliefs root_reach,
                             SolverParams params, ValueNetPtr net)
    : game_(std::move(game)), tree_(std::move(tree)), params_(params), net_(std::move(net)) {
  if (!game_ || !tree_) throw std::invalid_argument("SubgameSolver: game and tree are required");
  check_tree_game(*game_, *tree_);
  H_ = game_->num_hands();
  const std::vector<char> possible = possible_hands(*game_, tree_->root_history());
  for (int p = 0; p < 2; ++p) {
    root_reach_[p] = checked_beliefs(root_reach[p], H_, p == 0 ? "beliefs of player 0" : "beliefs of player 1");
    // Hands the public cards rule out carry no mass (the callers' uniform fallbacks for a
    // PBS reached with zero mass include them; user input is checked in the bindings).
    // Untouched unless some such hand has mass, so results stay bit-identical otherwise.
    bool ruled_out = false;
    for (int h = 0; h < H_; ++h) ruled_out = ruled_out || (!possible[h] && root_reach_[p][h] > 0.0);
    if (!ruled_out) continue;
    double mass = 0.0;
    for (int h = 0; h < H_; ++h) mass += (root_reach_[p][h] = possible[h] ? root_reach_[p][h] : 0.0);
    if (!(mass > 0.0)) {
      for (int h = 0; h < H_; ++h) mass += (root_reach_[p][h] = possible[h] ? 1.0 : 0.0);
    }
    for (int h = 0; h < H_; ++h) root_reach_[p][h] /= mass;
  }
  if (params_.leaf_beliefs != LeafBeliefs::kIterate) {
    if (is_fp()) throw std::invalid_argument("average-policy leaf beliefs (CFR-AVG) apply to the CFR solvers, not to FP");
    if (params_.off_path != OffPath::kSkip) {
      throw std::invalid_argument("CFR-AVG (" + solver_name(params_) + ") supports off_path 'skip' only, got '" +
                                  off_path_name(params_.off_path) + "'");
    }
    if (params_.leaf_beliefs == LeafBeliefs::kAverage && params_.kind != SolverKind::kLinearCfr &&
        params_.kind != SolverKind::kCfr) {
      throw std::invalid_argument("the sound form of CFR-AVG is defined for cfr and lcfr weights, not " +
                                  solver_kind_name(params_.kind));
    }
  }
  if (params_.play_average && params_.leaf_beliefs == LeafBeliefs::kIterate) {
    throw std::invalid_argument("play_average (the '-play-avg' solvers) applies to CFR-AVG only, not to " +
                                solver_name(params_));
  }
  if (!tree_->pseudo_leaves.empty() && !net_) {
    throw std::invalid_argument("the subgame has " + std::to_string(tree_->pseudo_leaves.size()) +
                                " pseudo-leaves: a value net is required (or remove the depth limit)");
  }
  const size_t cells = static_cast<size_t>(tree_->size()) * H_;
  current_ = uniform_policy(*game_, *tree_);
  average_ = current_;
  regrets_.assign(cells, 0.0);
  scratch_.assign(H_, 0.0);
  values_.assign(cells, 0.0);
  // The uniform policy enters the average once, weighted by each player's own reach.
  sum_.assign(cells, 0.0);
  const bool orders = params_.off_path != OffPath::kSkip && !is_fp();
  for (int p = 0; p < 2; ++p) {
    if (!orders) {
      compute_reach(*tree_, H_, current_, p, root_reach_[p].data(), &reach_[p]);
    } else {
      // A hand the beliefs exclude is reached at order 1 (coefficient 1); the uniform
      // policy plays every action, so every node keeps the root's orders.
      std::vector<double> root = root_reach_[p];
      std::vector<uint16_t> root_order(H_, 0);
      for (int h = 0; h < H_; ++h) {
        if (root[h] > 0.0) continue;
        root[h] = 1.0;
        root_order[h] = 1;
      }
      compute_reach(*tree_, H_, current_, p, root.data(), &reach_[p]);
      orders_[p].resize(cells);
      for (size_t i = 0; i < cells; ++i) orders_[p][i] = root_order[i % H_];
      for (int n : tree_->internal_nodes) {  // top-down: copy the orders through chance
        const size_t child = static_cast<size_t>(tree_->first_child[n]) * H_;
        reach_where_not_acting(H_, tree_->num_children[n], &orders_[p][static_cast<size_t>(n) * H_],
                               &orders_[p][child]);
        if (const double* f = tree_->chance_factors_at(n))
          detail::mark_impossible(H_, tree_->num_children[n], f, &orders_[p][child]);
      }
    }
    for (int n : tree_->decision_nodes) {
      if (decision_role(*tree_, n, p) != NodeRole::kOwn) continue;  // p's average lives at its own nodes
      for (int c = tree_->first_child[n]; c < tree_->first_child[n] + tree_->num_children[n]; ++c) {
        for (int h = 0; h < H_; ++h) {
          const size_t i = static_cast<size_t>(n) * H_ + h;
          const double own = orders && orders_[p][i] != 0 ? 0.0 : reach_[p][i];
          sum_[static_cast<size_t>(c) * H_ + h] = own * current_[static_cast<size_t>(c) * H_ + h];
        }
      }
    }
  }
  if (orders) {
    regret_order_.assign(cells, kNeverUpdated);
    scratch_keep_.assign(H_, 0.0);
    scratch_replace_.assign(H_, 0.0);
    node_order_.assign(tree_->size(), 0);
    opp_leading_.assign(cells, 0.0);
  }
  for (int p = 0; p < 2; ++p) {
    root_values_mean_[p].assign(H_, 0.0);
    root_values_last_[p].assign(H_, 0.0);
  }
  // Pseudo-leaf query rows: the header and features never change, beliefs do. Each
  // iteration copies the rows of the leaves it queries into a dense batch.
  const int L = static_cast<int>(tree_->pseudo_leaves.size());
  if (L > 0) {
    const int row = query_size(*game_);
    leaf_rows_.assign(static_cast<size_t>(L) * row, 0.0f);
    query_rows_.assign(static_cast<size_t>(L) * row, 0.0f);
    query_beliefs_.assign(static_cast<size_t>(L) * 2 * H_, 0.0);
    leaf_out_.assign(static_cast<size_t>(L) * H_, 0.0);
    if (H_ == 1) single_hand_values_.assign(static_cast<size_t>(L) * 2, std::numeric_limits<double>::quiet_NaN());
    queried_leaves_.reserve(L);
    if (params_.leaf_beliefs == LeafBeliefs::kAverage) {
      for (auto& v : previous_leaf_values_) v.assign(static_cast<size_t>(L) * H_, 0.0);
    }
    batch_.row_size = row;
    batch_.rows = query_rows_.data();
    batch_.queried_player.reserve(L);
    batch_.histories.reserve(L);
    batch_.beliefs0.reserve(L);
    batch_.beliefs1.reserve(L);
    for (int i = 0; i < L; ++i) {
      const int n = tree_->pseudo_leaves[i];
      write_query_public(*game_, tree_->history[n], tree_->player[n], &leaf_rows_[static_cast<size_t>(i) * row]);
    }
  }
}

bool SubgameSolver::is_fp() const {
  return params_.kind == SolverKind::kFp || params_.kind == SolverKind::kLinearFp;
}

void SubgameSolver::run(int iterations) {
  if (iterations < 0) throw std::invalid_argument("iterations must be >= 0, got " + std::to_string(iterations));
  for (int i = 0; i < iterations; ++i) step();
}

void SubgameSolver::step() {
  const int player = num_steps() % 2;
  if (is_fp()) fp_step(player);
  else cfr_step(player);
}

void SubgameSolver::iterate_beliefs(int node, int player, double* out) const {
  if (!tracks_orders()) throw std::logic_error("iterate_beliefs needs an off-path mode other than skip (CFR solvers)");
  const size_t i = static_cast<size_t>(node) * H_;
  normalize_reach(&reach_[player][i], &orders_[player][i], H_, params_.off_path, out);
}

void SubgameSolver::update_root_mean(int player, int update_index) {
  const bool uniform_average = params_.kind == SolverKind::kCfr || params_.kind == SolverKind::kFp;
  const double alpha = uniform_average ? 1.0 / update_index : 2.0 / (update_index + 1);
  auto& mean = root_values_mean_[player];
  auto& last = root_values_last_[player];
  for (int h = 0; h < H_; ++h) {
    last[h] = values_[h];
    mean[h] += (values_[h] - mean[h]) * alpha;
  }
}

const std::vector<double>& SubgameSolver::average_policy() const {
  if (average_stale_) {
    normalize_policy(*tree_, H_, sum_, &average_);
    average_stale_ = false;
  }
  return average_;
}
}  // namespace rebel
