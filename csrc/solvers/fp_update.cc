// One fictitious-play update of a player: best response to the opponent's average (leaf
// values included), folded into the player's (linear, optionally optimistic) average.
#include <algorithm>

#include "core/tree_ops.h"
#include "solvers/subgame_solver.h"

namespace rebel {

void SubgameSolver::fp_step(int player) {
  const PublicTree& t = *tree_;
  const int H = H_;
  // Best response of `player` to the opponent's current average (leaf values too).
  for (int p = 0; p < 2; ++p) compute_reach(t, H, average_, p, root_reach_[p].data(), &reach_[p]);
  compute_leaf_values(player);
  backup_best_response(t, H, player, &values_, &best_child_);
  const int t_update = ++steps_[player];
  update_root_mean(player, t_update);
  const double strat = params_.kind == SolverKind::kLinearFp ? t_update / (t_update + 1.0) : 1.0;

  // Reach of `player` under the best response, then fold the BR into the average.
  std::vector<double>& br_reach = reach_[player];
  br_reach.assign(static_cast<size_t>(t.size()) * H, 0.0);
  std::copy(root_reach_[player].begin(), root_reach_[player].end(), br_reach.begin());
  for (int n : t.internal_nodes) {
    const int begin = t.first_child[n], end = begin + t.num_children[n];
    const double* rn = &br_reach[static_cast<size_t>(n) * H];
    if (decision_role(t, n, player) != NodeRole::kOwn) {
      reach_where_not_acting(H, end - begin, rn, &br_reach[static_cast<size_t>(begin) * H], t.chance_factors_at(n));
      continue;
    }
    const int* best = &best_child_[static_cast<size_t>(n) * H];
    for (int c = begin; c < end; ++c) {
      double* s = &sum_[static_cast<size_t>(c) * H];
      double* rc = &br_reach[static_cast<size_t>(c) * H];
      for (int h = 0; h < H; ++h) {
        const double played = best[h] == c ? rn[h] : 0.0;
        rc[h] = played;
        s[h] = s[h] * strat + played;
      }
    }
    for (int h = 0; h < H; ++h) {
      double tot = 0.0;
      for (int c = begin; c < end; ++c) {
        tot += sum_[static_cast<size_t>(c) * H + h];
        if (params_.optimistic) tot += br_reach[static_cast<size_t>(c) * H + h];
      }
      for (int c = begin; c < end; ++c) {
        double w = sum_[static_cast<size_t>(c) * H + h];
        if (params_.optimistic) w += br_reach[static_cast<size_t>(c) * H + h];
        average_[static_cast<size_t>(c) * H + h] = tot > 0.0 ? w / tot : 1.0 / (end - begin);
      }
    }
  }
}
}  // namespace rebel
