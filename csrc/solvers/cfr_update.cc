// One CFR update of a player (kSkip: reaches as plain numbers): the bottom-up pass (values of
// the current iterate, instantaneous regrets) and the fused top-down pass (regret matching,
// discounting, the player's reach, the average sum), vectorised over hands.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/tree_ops.h"
#include "solvers/subgame_solver.h"
#include "solvers/subgame_solver_internal.h"
#include "util/simd.h"

namespace rebel {

using detail::Discounts;
using detail::discounts_after;

namespace {

// Four hands at a time (GCC vector extensions: AVX2 registers in the x86-64-v3 clone, pairs
// of SSE2 registers in the default one), then the remaining hands one by one. Lane-wise IEEE
// operations in the same order as the scalar code: the same bits as the one-hand-at-a-time
// loops (selects replace the ternaries; a division whose lane is discarded is harmless).
#pragma GCC diagnostic ignored "-Wpsabi"
typedef double v4d __attribute__((vector_size(32)));
REBEL_ALWAYS_INLINE v4d load4(const double* p) {
  v4d v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
REBEL_ALWAYS_INLINE void store4(double* p, v4d v) { std::memcpy(p, &v, sizeof v); }
REBEL_ALWAYS_INLINE v4d splat4(double x) { return v4d{x, x, x, x}; }
// (-Wpsabi is off for this file: v4d values never cross a call, the helpers and the bodies
// using them are always inlined into the clones; GCC reports it only after the file is parsed.)

// Hand loops are written once, for a hand count fixed at compile time (kHands > 0: fully
// unrolled, which pays off for the handful of hands of the paper's games) or known at run
// time (kHands == 0). Every variant does the same arithmetic in the same order, so results
// are bit-identical whichever one runs.

// One child of a node of the updating player, all hands: the regret-matching probability
// (division by the positive-regret total so a lone positive regret gives exactly 1), the
// discounted regret, the reach and the discounted average sum. Branch-free. Where the hand
// has no positive regret the child gets `uniform`, or with kFallback fallback[h] (a
// warm-started solver's start policy, warm_start.cc; a compile-time choice, so the cold
// solver's loop is unchanged).
template <int kHands, bool kFallback>
REBEL_ALWAYS_INLINE void regret_match_child_body(int hands, double uniform, double pos, double neg, double strat,
                                                 const double* __restrict fallback, const double* __restrict total,
                                                 const double* __restrict parent_reach, double* __restrict regret,
                                                 double* __restrict current, double* __restrict reach,
                                                 double* __restrict sum) {
  const int H = kHands > 0 ? kHands : hands;
  int h = 0;
  const v4d zero = splat4(0.0), one = splat4(1.0), uniform4 = splat4(uniform), pos4 = splat4(pos),
            neg4 = splat4(neg), strat4 = splat4(strat);
  for (; h + 4 <= H; h += 4) {
    const v4d r = load4(regret + h), t = load4(total + h);
    const auto r_pos = r > zero;
    const auto t_pos = t > zero;
    const v4d positive = r_pos ? r : zero;
    v4d otherwise = uniform4;
    if constexpr (kFallback) otherwise = load4(fallback + h);
    const v4d p = t_pos ? positive / (t_pos ? t : one) : otherwise;
    store4(current + h, p);
    store4(regret + h, r * (r_pos ? pos4 : neg4));
    const v4d reached = load4(parent_reach + h) * p;
    store4(reach + h, reached);
    store4(sum + h, load4(sum + h) * strat4 + reached);
  }
  for (; h < H; ++h) {
    const double r = regret[h];
    const double positive = r > 0.0 ? r : 0.0;
    const double p = total[h] > 0.0 ? positive / total[h] : (kFallback ? fallback[h] : uniform);
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
  int h = 0;
  for (; h + 4 <= H; h += 4) {
    v4d v = splat4(0.0);
    for (int k = 0; k < num_children; ++k) {
      const size_t i = static_cast<size_t>(k) * H + h;
      v += load4(policy + i) * load4(child_values + i);
    }
    store4(value + h, v);
    for (int k = 0; k < num_children; ++k) {
      const size_t i = static_cast<size_t>(k) * H + h;
      store4(regrets + i, load4(regrets + i) + (load4(child_values + i) - v));
    }
  }
  // The remaining hands (all of them under 4 hands), children outermost.
  const int h0 = h;
  for (h = h0; h < H; ++h) value[h] = 0.0;
  for (int k = 0; k < num_children; ++k) {
    const double* vc = child_values + static_cast<size_t>(k) * H;
    const double* p = policy + static_cast<size_t>(k) * H;
    for (h = h0; h < H; ++h) value[h] += p[h] * vc[h];
  }
  for (int k = 0; k < num_children; ++k) {
    const double* vc = child_values + static_cast<size_t>(k) * H;
    double* r = regrets + static_cast<size_t>(k) * H;
    for (h = h0; h < H; ++h) r[h] += vc[h] - value[h];
  }
}

// Run-time hand counts: one vectorised clone per CPU family.
REBEL_SIMD_CLONES void regret_match_child(int H, double uniform, double pos, double neg, double strat,
                                          const double* __restrict fallback, const double* __restrict total,
                                          const double* __restrict parent_reach, double* __restrict regret,
                                          double* __restrict current, double* __restrict reach,
                                          double* __restrict sum) {
  regret_match_child_body<0, false>(H, uniform, pos, neg, strat, fallback, total, parent_reach, regret, current,
                                    reach, sum);
}
REBEL_SIMD_CLONES void regret_match_child_fallback(int H, double uniform, double pos, double neg, double strat,
                                                   const double* __restrict fallback, const double* __restrict total,
                                                   const double* __restrict parent_reach, double* __restrict regret,
                                                   double* __restrict current, double* __restrict reach,
                                                   double* __restrict sum) {
  regret_match_child_body<0, true>(H, uniform, pos, neg, strat, fallback, total, parent_reach, regret, current,
                                   reach, sum);
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
  REBEL_ALWAYS_INLINE static void backup(const PublicTree& t, int hands, int player, const double* current,
                                         double* values, double* regrets) {
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
  // `fallback`: null (uniform where a hand has no positive regret) or a policy in the tree
  // layout played there instead.
  REBEL_ALWAYS_INLINE static void update(const PublicTree& t, int hands, int player, const Discounts& d,
                                         const double* fallback, double* reach, double* regrets, double* current,
                                         double* sum, double* total) {
    const int H = kHands > 0 ? kHands : hands;
    for (int n : t.internal_nodes) {
      const int begin = t.first_child[n], end = begin + t.num_children[n];
      const double* rn = reach + static_cast<size_t>(n) * H;
      if (decision_role(t, n, player) != NodeRole::kOwn) {
        reach_where_not_acting<kHands>(H, end - begin, rn, reach + static_cast<size_t>(begin) * H,
                                       t.chance_factors_at(n));
        continue;
      }
      // The positive-regret totals: four hands at a time with the children inner (each
      // total summed over the children in order, as in the one-hand loop), then the rest.
      const double uniform = 1.0 / (end - begin);
      {
        int h = 0;
        const v4d zero = splat4(0.0);
        for (; h + 4 <= H; h += 4) {
          v4d tot = zero;
          for (int c = begin; c < end; ++c) {
            double* r = regrets + static_cast<size_t>(c) * H + h;
            v4d rv = load4(r);
            if (d.floor_regrets) {
              rv = rv > zero ? rv : zero;
              store4(r, rv);
            }
            tot += rv > zero ? rv : zero;
          }
          store4(total + h, tot);
        }
        const int h0 = h;
        std::fill(total + h0, total + H, 0.0);
        for (int c = begin; c < end; ++c) {
          double* r = regrets + static_cast<size_t>(c) * H;
          if (d.floor_regrets) {
            for (h = h0; h < H; ++h) r[h] = r[h] > 0.0 ? r[h] : 0.0;
          }
          for (h = h0; h < H; ++h) total[h] += r[h] > 0.0 ? r[h] : 0.0;
        }
      }
      for (int c = begin; c < end; ++c) {
        const size_t i = static_cast<size_t>(c) * H;
        const double* fb = fallback ? fallback + i : nullptr;
        if constexpr (kHands > 0) {
          if (fb) {
            regret_match_child_body<kHands, true>(H, uniform, d.pos, d.neg, d.strat, fb, total, rn, regrets + i,
                                                  current + i, reach + i, sum + i);
          } else {
            regret_match_child_body<kHands, false>(H, uniform, d.pos, d.neg, d.strat, fb, total, rn, regrets + i,
                                                   current + i, reach + i, sum + i);
          }
        } else {
          if (fb) {
            regret_match_child_fallback(H, uniform, d.pos, d.neg, d.strat, fb, total, rn, regrets + i, current + i,
                                        reach + i, sum + i);
          } else {
            regret_match_child(H, uniform, d.pos, d.neg, d.strat, fb, total, rn, regrets + i, current + i, reach + i,
                               sum + i);
          }
        }
      }
    }
  }
};

// The passes for each small hand count and for run-time counts (0), each compiled once per
// CPU family (the passes are inlined into these clones, so the unrolled hand loops get AVX2
// where the CPU has it). Without FMA contraction (-ffp-contract=off) every clone does the same
// IEEE operations in the same order: the bits do not depend on the clone that runs.
#define REBEL_CFR_PASSES(K, CLONES)                                                                    \
  CLONES void backup_##K(const PublicTree& t, int hands, int player, const double* current, \
                                    double* values, double* regrets) {                                 \
    CfrPasses<K>::backup(t, hands, player, current, values, regrets);                                  \
  }                                                                                                    \
  CLONES void update_##K(const PublicTree& t, int hands, int player, const Discounts& d,                \
                         const double* fallback, double* reach, double* regrets, double* current,      \
                         double* sum, double* total) {                                                 \
    CfrPasses<K>::update(t, hands, player, d, fallback, reach, regrets, current, sum, total);          \
  }
// Under 4 hands there is no 4-lane loop: plain functions (a direct call, no ifunc; Kuhn's
// tree is so small that the indirect call shows).
#define REBEL_NO_CLONES
REBEL_CFR_PASSES(0, REBEL_SIMD_CLONES)
REBEL_CFR_PASSES(2, REBEL_NO_CLONES)
REBEL_CFR_PASSES(3, REBEL_NO_CLONES)
REBEL_CFR_PASSES(4, REBEL_SIMD_CLONES)
REBEL_CFR_PASSES(5, REBEL_SIMD_CLONES)
REBEL_CFR_PASSES(6, REBEL_SIMD_CLONES)
REBEL_CFR_PASSES(7, REBEL_SIMD_CLONES)
REBEL_CFR_PASSES(8, REBEL_SIMD_CLONES)
REBEL_CFR_PASSES(9, REBEL_SIMD_CLONES)
#undef REBEL_NO_CLONES
#undef REBEL_CFR_PASSES

// Calls backup_k / update_k with k = H for the small hand counts, else k = 0.
#define REBEL_WITH_HANDS(H, F, ...)  \
  switch (H) {                       \
    case 2: F##_2(__VA_ARGS__); break; \
    case 3: F##_3(__VA_ARGS__); break; \
    case 4: F##_4(__VA_ARGS__); break; \
    case 5: F##_5(__VA_ARGS__); break; \
    case 6: F##_6(__VA_ARGS__); break; \
    case 7: F##_7(__VA_ARGS__); break; \
    case 8: F##_8(__VA_ARGS__); break; \
    case 9: F##_9(__VA_ARGS__); break; \
    default: F##_0(__VA_ARGS__); break; \
  }

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
  REBEL_WITH_HANDS(H, backup, t, H, player, current_.data(), values_.data(), regrets_.data());
  const int t_update = ++steps_[player];
  update_root_mean(player, t_update);

  const Discounts d = discounts_after(params_, t_update);
  const double* fallback = warm_fallback_.empty() ? nullptr : warm_fallback_.data();
  REBEL_WITH_HANDS(H, update, t, H, player, d, fallback, reach_[player].data(), regrets_.data(), current_.data(),
                   sum_.data(), scratch_.data());
  average_stale_ = true;
}
}  // namespace rebel
