// One CFR update of a player in the off-path modes kFloor and kConditional: reaches kept as
// leading-order terms c * eps^k, regrets with their order (see OffPath in subgame_solver.h).
#include <algorithm>
#include <vector>

#include "core/tree_ops.h"
#include "solvers/subgame_solver.h"
#include "solvers/subgame_solver_internal.h"

namespace rebel {

using detail::discounts_after;
using detail::Discounts;
using detail::kMaxOrder;
using detail::kNeverUpdated;

// One CFR update of `player` with reaches kept as leading-order terms (see OffPath). The
// arithmetic on order-0 terms is that of cfr_step; what differs is what happens off path:
//  * the opponent's reach at node n is its lowest-order term, of order K(n) = node_order_[n]
//    (0 wherever the opponent's iterate reaches n); values at n are coefficients of eps^K(n),
//    so an opponent node sums only the children of its own order;
//  * the regrets of a node and hand hold the coefficients of one order, regret_order_: an
//    update of lower order replaces them, one of the same order adds to them, one of
//    higher order is negligible, and one whose regrets are all 0 changes nothing (kFloor
//    also drops order 2 and beyond, which its floor never sees);
//  * regret matching: kConditional uses the positive regrets whatever their order, and an
//    action it gives probability 0 is taken at the next order with weight 1; kFloor plays
//    as the original's max(R, eps): order 0 as kConditional but with weight 1 / total,
//    order 1 in proportion to max(R, 1), higher orders (or none yet) uniformly.
void SubgameSolver::cfr_step_orders(int player) {
  const PublicTree& t = *tree_;
  const int H = H_;
  const int opp = 1 - player;
  const bool floor_mode = params_.off_path == OffPath::kFloor;
  {
    const std::vector<double>& coef = reach_[opp];
    const std::vector<uint16_t>& order = orders_[opp];
    for (int n = 0; n < t.size(); ++n) {
      const size_t b = static_cast<size_t>(n) * H;
      uint16_t lowest = order[b];
      for (int h = 1; h < H; ++h) lowest = std::min(lowest, order[b + h]);
      node_order_[n] = lowest;
      for (int h = 0; h < H; ++h) opp_leading_[b + h] = order[b + h] == lowest ? coef[b + h] : 0.0;
    }
  }
  compute_leaf_values(player);

  // Bottom-up values of the current iterate and regrets, order by order.
  for (auto it = t.internal_nodes.rbegin(); it != t.internal_nodes.rend(); ++it) {
    const int n = *it;
    const int begin = t.first_child[n], end = begin + t.num_children[n];
    const uint16_t K = node_order_[n];
    double* v = &values_[static_cast<size_t>(n) * H];
    if (decision_role(t, n, player) != NodeRole::kOwn) {
      // Children reached at a higher order than the node are negligible here.
      value_where_not_acting(H, end - begin, &values_[static_cast<size_t>(begin) * H], v, t.chance_factors_at(n),
                             [&](int k) { return node_order_[begin + k] == K; });
      continue;
    }
    for (int h = 0; h < H; ++h) v[h] = 0.0;
    for (int c = begin; c < end; ++c) {
      const double* vc = &values_[static_cast<size_t>(c) * H];
      const double* p = &current_[static_cast<size_t>(c) * H];
      for (int h = 0; h < H; ++h) v[h] += p[h] * vc[h];
    }
    if (floor_mode && K >= 2) continue;
    // Per hand: keep (regrets of a lower order lead), add (same order) or replace (this
    // order is lower). Regrets that are all 0 at order K carry nothing: the stored ones
    // still lead.
    uint16_t* stored = &regret_order_[static_cast<size_t>(n) * H];
    double* keep = scratch_keep_.data();
    double* replace = scratch_replace_.data();
    for (int h = 0; h < H; ++h) keep[h] = 1.0;
    for (int c = begin; c < end; ++c) {
      const double* vc = &values_[static_cast<size_t>(c) * H];
      for (int h = 0; h < H; ++h) keep[h] = vc[h] != v[h] ? 0.0 : keep[h];
    }
    for (int h = 0; h < H; ++h) {
      if (K > stored[h]) keep[h] = 1.0;
      replace[h] = keep[h] == 0.0 && K < stored[h] ? 1.0 : 0.0;
      if (keep[h] == 0.0) stored[h] = K;
    }
    for (int c = begin; c < end; ++c) {
      const double* vc = &values_[static_cast<size_t>(c) * H];
      double* r = &regrets_[static_cast<size_t>(c) * H];
      for (int h = 0; h < H; ++h) {
        const double x = vc[h] - v[h];
        r[h] = keep[h] != 0.0 ? r[h] : replace[h] != 0.0 ? x : r[h] + x;
      }
    }
  }
  const int t_update = ++steps_[player];
  update_root_mean(player, t_update);

  // Top-down: regret matching, discounting, the player's reach (coefficients and orders)
  // under the new iterate and the average (order-0 reach only).
  const Discounts d = discounts_after(params_, t_update);
  std::vector<double>& coef = reach_[player];
  std::vector<uint16_t>& order = orders_[player];
  double* total = scratch_.data();
  double* tremble = scratch_keep_.data();
  double* rule = scratch_replace_.data();  // kFloor: 0 = regret matching, 1 = max(R, 1), 2 = uniform
  for (int n : t.internal_nodes) {
    const int begin = t.first_child[n], end = begin + t.num_children[n];
    const size_t bn = static_cast<size_t>(n) * H;
    if (decision_role(t, n, player) != NodeRole::kOwn) {
      reach_where_not_acting(H, end - begin, &coef[bn], &coef[static_cast<size_t>(begin) * H],
                             t.chance_factors_at(n));
      reach_where_not_acting(H, end - begin, &order[bn], &order[static_cast<size_t>(begin) * H]);
      if (const double* f = t.chance_factors_at(n)) detail::mark_impossible(H, end - begin, f, &order[static_cast<size_t>(begin) * H]);
      continue;
    }
    const double uniform = 1.0 / (end - begin);
    uint16_t* stored = &regret_order_[bn];
    if (d.floor_regrets) {
      // CFR+: regrets floored at 0 exactly; a hand whose regrets are then all 0 has no
      // leading order any more (the next update of any order leads).
      std::fill(total, total + H, 0.0);
      for (int c = begin; c < end; ++c) {
        double* r = &regrets_[static_cast<size_t>(c) * H];
        for (int h = 0; h < H; ++h) {
          r[h] = r[h] > 0.0 ? r[h] : 0.0;
          total[h] += r[h];
        }
      }
      for (int h = 0; h < H; ++h) {
        if (total[h] == 0.0) stored[h] = kNeverUpdated;
      }
    }
    // kConditional: regret matching at every order.
    for (int h = 0; h < H; ++h) rule[h] = !floor_mode || stored[h] == 0 ? 0.0 : stored[h] == 1 ? 1.0 : 2.0;
    // A loop, not std::fill(total, total + H): GCC 13 cannot see H >= 0 there and warns
    // (-Wstringop-overflow) about a memset of a negative length.
    for (int h = 0; h < H; ++h) total[h] = 0.0;
    for (int c = begin; c < end; ++c) {
      const double* r = &regrets_[static_cast<size_t>(c) * H];
      for (int h = 0; h < H; ++h) {
        const double floored = rule[h] == 0.0 ? (r[h] > 0.0 ? r[h] : 0.0) : (r[h] > 1.0 ? r[h] : 1.0);
        total[h] += rule[h] == 2.0 ? 0.0 : floored;
      }
    }
    for (int h = 0; h < H; ++h) tremble[h] = floor_mode && total[h] > 0.0 ? 1.0 / total[h] : 1.0;
    for (int c = begin; c < end; ++c) {
      const size_t i = static_cast<size_t>(c) * H;
      for (int h = 0; h < H; ++h) {
        const double r = regrets_[i + h];
        double p = uniform;
        if (rule[h] == 0.0 && total[h] > 0.0) p = (r > 0.0 ? r : 0.0) / total[h];
        else if (rule[h] == 1.0) p = (r > 1.0 ? r : 1.0) / total[h];
        current_[i + h] = p;
        regrets_[i + h] = r * (r > 0.0 ? d.pos : d.neg);
        const double parent = coef[bn + h];
        const uint16_t k = order[bn + h];
        if (p > 0.0) {
          coef[i + h] = parent * p;
          order[i + h] = k;
        } else {
          coef[i + h] = parent * tremble[h];
          order[i + h] = k < kMaxOrder ? static_cast<uint16_t>(k + 1) : kMaxOrder;
        }
        sum_[i + h] = sum_[i + h] * d.strat + (k == 0 ? parent * p : 0.0);
      }
    }
  }
  average_stale_ = true;
}
}  // namespace rebel
