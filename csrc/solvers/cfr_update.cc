// One CFR update of a player (kSkip: reaches as plain numbers): the bottom-up pass (values of
// the current iterate, instantaneous regrets) and the fused top-down pass (regret matching,
// discounting, the player's reach, the average sum), vectorised over hands.
#include <algorithm>
#include <cmath>

#include "core/tree_ops.h"
#include "solvers/subgame_solver.h"
#include "solvers/subgame_solver_internal.h"
#include "util/simd.h"

namespace rebel {

using detail::Discounts;
using detail::discounts_after;

namespace {

// Hand loops are written once, for a hand count fixed at compile time (kHands > 0: fully
// unrolled, which pays off for the handful of hands of the paper's games) or known at run
// time (kHands == 0). Every variant does the same arithmetic in the same order, so results
// are bit-identical whichever one runs.

// One child of a node of the updating player, all hands: the regret-matching probability
// (division by the positive-regret total so a lone positive regret gives exactly 1), the
// discounted regret, the reach and the discounted average sum. Branch-free.
template <int kHands>
REBEL_ALWAYS_INLINE void regret_match_child_body(int hands, double uniform, double pos, double neg, double strat,
                                                 const double* __restrict total,
                                                 const double* __restrict parent_reach, double* __restrict regret,
                                                 double* __restrict current, double* __restrict reach,
                                                 double* __restrict sum) {
  const int H = kHands > 0 ? kHands : hands;
  for (int h = 0; h < H; ++h) {
    const double r = regret[h];
    const double positive = r > 0.0 ? r : 0.0;
    const double p = total[h] > 0.0 ? positive / total[h] : uniform;
    current[h] = p;
    regret[h] = r * (r > 0.0 ? pos : neg);
    const double reached = parent_reach[h] * p;
    reach[h] = reached;
    sum[h] = sum[h] * strat + reached;
  }
}

// One node of the bottom-up pass (children are contiguous, H values each): the node's value
// (policy-weighted for the updating player, value_where_not_acting elsewhere) and, for the
// updating player, each child's instantaneous regret.
template <int kHands>
REBEL_ALWAYS_INLINE void backup_node_body(int hands, int num_children, bool own, const double* __restrict factors,
                                          const double* __restrict policy, const double* __restrict child_values,
                                          double* __restrict value, double* __restrict regrets) {
  const int H = kHands > 0 ? kHands : hands;
  if (!own) {
    value_where_not_acting<kHands>(H, num_children, child_values, value, factors);
    return;
  }
  for (int h = 0; h < H; ++h) value[h] = 0.0;
  for (int k = 0; k < num_children; ++k) {
    const double* vc = child_values + static_cast<size_t>(k) * H;
    const double* p = policy + static_cast<size_t>(k) * H;
    for (int h = 0; h < H; ++h) value[h] += p[h] * vc[h];
  }
  for (int k = 0; k < num_children; ++k) {
    const double* vc = child_values + static_cast<size_t>(k) * H;
    double* r = regrets + static_cast<size_t>(k) * H;
    for (int h = 0; h < H; ++h) r[h] += vc[h] - value[h];
  }
}

// Run-time hand counts: one vectorised clone per CPU family.
REBEL_SIMD_CLONES void regret_match_child(int H, double uniform, double pos, double neg, double strat,
                                          const double* __restrict total, const double* __restrict parent_reach,
                                          double* __restrict regret, double* __restrict current,
                                          double* __restrict reach, double* __restrict sum) {
  regret_match_child_body<0>(H, uniform, pos, neg, strat, total, parent_reach, regret, current, reach, sum);
}

REBEL_SIMD_CLONES void backup_node(int H, int num_children, bool own, const double* __restrict factors,
                                   const double* __restrict policy, const double* __restrict child_values,
                                   double* __restrict value, double* __restrict regrets) {
  backup_node_body<0>(H, num_children, own, factors, policy, child_values, value, regrets);
}

// The two passes of one CFR update of `player` over the whole tree.
template <int kHands>
struct CfrPasses {
  // Bottom-up values of the current iterate; instantaneous regrets added to `regrets`.
  static void backup(const PublicTree& t, int hands, int player, const double* current, double* values,
                     double* regrets) {
    const int H = kHands > 0 ? kHands : hands;
    for (auto it = t.internal_nodes.rbegin(); it != t.internal_nodes.rend(); ++it) {
      const int n = *it;
      const size_t begin = static_cast<size_t>(t.first_child[n]) * H;
      const bool own = decision_role(t, n, player) == NodeRole::kOwn;
      const double* factors = t.chance_factors_at(n);
      if constexpr (kHands > 0) {
        backup_node_body<kHands>(H, t.num_children[n], own, factors, current + begin, values + begin,
                                 values + static_cast<size_t>(n) * H, regrets + begin);
      } else {
        backup_node(H, t.num_children[n], own, factors, current + begin, values + begin,
                    values + static_cast<size_t>(n) * H, regrets + begin);
      }
    }
  }

  // One top-down pass: regret matching gives the new iterate, regrets are discounted, the
  // player's reach under the new iterate is propagated and folded into the average.
  static void update(const PublicTree& t, int hands, int player, const Discounts& d, double* reach,
                     double* regrets, double* current, double* sum, double* total) {
    const int H = kHands > 0 ? kHands : hands;
    for (int n : t.internal_nodes) {
      const int begin = t.first_child[n], end = begin + t.num_children[n];
      const double* rn = reach + static_cast<size_t>(n) * H;
      if (decision_role(t, n, player) != NodeRole::kOwn) {
        reach_where_not_acting<kHands>(H, end - begin, rn, reach + static_cast<size_t>(begin) * H,
                                       t.chance_factors_at(n));
        continue;
      }
      // Hands innermost everywhere so the loops vectorise.
      const double uniform = 1.0 / (end - begin);
      std::fill(total, total + H, 0.0);
      for (int c = begin; c < end; ++c) {
        double* r = regrets + static_cast<size_t>(c) * H;
        if (d.floor_regrets) {
          for (int h = 0; h < H; ++h) r[h] = r[h] > 0.0 ? r[h] : 0.0;
        }
        for (int h = 0; h < H; ++h) total[h] += r[h] > 0.0 ? r[h] : 0.0;
      }
      for (int c = begin; c < end; ++c) {
        const size_t i = static_cast<size_t>(c) * H;
        if constexpr (kHands > 0) {
          regret_match_child_body<kHands>(H, uniform, d.pos, d.neg, d.strat, total, rn, regrets + i, current + i,
                                          reach + i, sum + i);
        } else {
          regret_match_child(H, uniform, d.pos, d.neg, d.strat, total, rn, regrets + i, current + i, reach + i,
                             sum + i);
        }
      }
    }
  }
};

// Calls `F<k>::run(args...)` with k = H for the small hand counts, else k = 0.
template <template <int> class F, typename... Args>
void with_hands(int H, Args&&... args) {
  switch (H) {
    case 2: return F<2>::run(args...);
    case 3: return F<3>::run(args...);
    case 4: return F<4>::run(args...);
    case 5: return F<5>::run(args...);
    case 6: return F<6>::run(args...);
    case 7: return F<7>::run(args...);
    case 8: return F<8>::run(args...);
    case 9: return F<9>::run(args...);
    default: return F<0>::run(args...);
  }
}

template <int kHands>
struct RunBackup {
  template <typename... Args>
  static void run(Args&&... args) { CfrPasses<kHands>::backup(args...); }
};
template <int kHands>
struct RunUpdate {
  template <typename... Args>
  static void run(Args&&... args) { CfrPasses<kHands>::update(args...); }
};

}  // namespace

// Discounts applied after update number t of a player (t = number of policies already in
// the average).
Discounts detail::discounts_after(const SolverParams& params, int t_update) {
  Discounts d;
  const double tt = t_update;
  switch (params.kind) {
    case SolverKind::kLinearCfr: d.pos = d.neg = d.strat = tt / (tt + 1.0); break;
    case SolverKind::kCfrPlus: d.strat = tt / (tt + 1.0); break;
    case SolverKind::kDcfr: {
      const double a = std::pow(tt, params.dcfr_alpha), b = std::pow(tt, params.dcfr_beta);
      d.pos = a / (a + 1.0);
      d.neg = b / (b + 1.0);
      d.strat = std::pow(tt / (tt + 1.0), params.dcfr_gamma);
      break;
    }
    default: break;
  }
  d.floor_regrets = params.kind == SolverKind::kCfrPlus;
  return d;
}

void SubgameSolver::cfr_step(int player) {
  if (tracks_orders()) {
    cfr_step_orders(player);
    return;
  }
  const PublicTree& t = *tree_;
  const int H = H_;
  // Invariant: reach_[p] holds p's reach under current_ (set by the constructor and by
  // the fused pass at the end of each of p's updates), so no reach pass is needed here.
  compute_leaf_values(player);
  with_hands<RunBackup>(H, t, H, player, current_.data(), values_.data(), regrets_.data());
  const int t_update = ++steps_[player];
  update_root_mean(player, t_update);

  const Discounts d = discounts_after(params_, t_update);
  with_hands<RunUpdate>(H, t, H, player, d, reach_[player].data(), regrets_.data(), current_.data(), sum_.data(),
                        scratch_.data());
  average_stale_ = true;
}
}  // namespace rebel
