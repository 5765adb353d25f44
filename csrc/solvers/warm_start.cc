// Warm start of SubgameSolver from a given policy sigma0 (ReBeL's InitializePolicy: the
// mechanism a policy network uses to start each subgame solve near its answer).
//
// Definition. warm_start(sigma0, K) puts the solver in the state it would be in after K
// updates of each player (2K half-steps) had both players played sigma0 throughout:
//  * CFR kinds. Let r_p(I, a) = v_p(I, a) - v_p(I) be the instantaneous counterfactual regrets
//    of sigma0 for player p: values of p playing sigma0 against the opponent's sigma0 reach,
//    leaf values as CFR-D takes them (terminal values from the opponent's reach, pseudo-leaf
//    values from the value net at the PBSs sigma0 induces). These are where a best response
//    to sigma0 enters: an action has positive regret exactly where it does better than
//    sigma0 does. The regrets are those of K updates that each added r_p, under the solver's
//    own discounting (discounts_after(t) after update t = 1..K, CFR+'s floor included):
//    linear CFR stores (sum_{t<=K} t r_p) / (K + 1) = r_p K / 2, which regret matching
//    reads as the weight t of update t; vanilla CFR K r_p; CFR+ K max(r_p, 0); DCFR its
//    per-sign discounts. The iterate after them is regret matching of those regrets, and
//    wherever a hand has no positive regret, now and in every later update, it plays sigma0
//    instead of the uniform policy (regret matching's guarantee holds for any choice there,
//    since its Blackwell condition is vacuous when no regret is positive), so an exact
//    equilibrium, whose regrets are all <= 0, stays where it is. The average sum is that of
//    the K updates: the K policies played (sigma0 each time) with the weights the solver
//    gives its first K policies (linear: 1, ..., K) plus the iterate after update K with
//    the weight of update K (linear: K + 1), all with the solver's normalisation (the same
//    recurrence sum <- sum * strat_t + x_t as the update pass). The step counters are K for
//    each player, so update K + 1 is weighted as such (linear: regret weight K + 1, average
//    weight K + 2). The averaged root values are p's root values under sigma0 (the value
//    every one of the K updates would have recorded).
//  * FP kinds. The average is sigma0 with the weight of K updates' policies in the
//    solver's normalisation (the uniform start and K best responses: linear FP (K + 2) / 2,
//    plain FP K + 1); the root values are those of the best response to sigma0, which is
//    what each of the K updates would have recorded; the counters are K. FP's next update
//    best-responds to sigma0, the average it plays.
//  * The regret prior (CFR kinds, SolverParams::warm_prior = lambda > 0). Each of the K
//    updates adds r_p(I, a) + lambda s(I) sigma0(I, a) instead of r_p(I, a), where s(I) is
//    the largest |v_p(I, a)| over I's actions (the payoff scale of the hand at the node).
//    Regret matching of r_p alone plays the actions that beat sigma0, often pure and driven
//    by small value errors; the prior keeps the first iterates near sigma0 until the
//    regrets of the T real updates outweigh it. Adding a non-negative vector to the regrets
//    keeps regret matching's guarantee for the shifted regrets, which bound the true ones
//    from above, so the prior costs at most its own size in the regret bound.
// K = 0 changes nothing: the solver stays bit-identical to a cold one. Only off_path kSkip
// is supported for the CFR kinds (the leading-order reaches of kFloor and kConditional have
// no warm start defined); the call is refused otherwise.
#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tree_ops.h"
#include "solvers/subgame_solver.h"
#include "solvers/subgame_solver_internal.h"

namespace rebel {

namespace {

// A copy of `policy` with every decision row renormalised to sum to exactly 1, after strict
// checks: size, every entry finite and non-negative, each decision node's row (per hand)
// summing to 1 within 1e-6. Rows of nodes that are not children of a decision node are
// not read (they take the uniform policy's layout, 0).
std::vector<double> checked_warm_policy(const Game& game, const PublicTree& tree, const std::vector<double>& policy) {
  const int H = game.num_hands();
  const size_t cells = static_cast<size_t>(tree.size()) * H;
  if (policy.size() != cells) {
    std::ostringstream msg;
    msg << "warm-start policy has " << policy.size() << " entries, expected " << tree.size() << " nodes x " << H
        << " hands = " << cells;
    throw std::invalid_argument(msg.str());
  }
  for (size_t i = 0; i < cells; ++i) {
    if (!std::isfinite(policy[i]) || policy[i] < 0.0) {
      std::ostringstream msg;
      msg << "warm-start policy entry [" << i / H << ", " << i % H << "] (node " << i / H << ", hand "
          << game.hand_name(static_cast<int>(i % H)) << ") is " << policy[i]
          << "; probabilities must be finite and non-negative";
      throw std::invalid_argument(msg.str());
    }
  }
  std::vector<double> out = uniform_policy(game, tree);
  for (int n : tree.decision_nodes) {
    const int begin = tree.first_child[n], end = begin + tree.num_children[n];
    for (int h = 0; h < H; ++h) {
      double total = 0.0;
      for (int c = begin; c < end; ++c) total += policy[static_cast<size_t>(c) * H + h];
      if (!(std::abs(total - 1.0) <= 1e-6)) {
        std::ostringstream msg;
        msg << "warm-start policy at node " << n << " (player " << tree.player[n] << " acts), hand "
            << game.hand_name(h) << ": rows " << begin << ".." << end - 1 << " sum to " << total << ", not 1";
        throw std::invalid_argument(msg.str());
      }
      for (int c = begin; c < end; ++c) {
        const size_t i = static_cast<size_t>(c) * H + h;
        out[i] = policy[i] / total;
      }
    }
  }
  return out;
}

}  // namespace

void check_warm_start_params(const SolverParams& params, int iterations) {
  if (iterations < 0 || iterations > kMaxWarmIterations) {
    throw std::invalid_argument("warm-start iterations must be in [0, " + std::to_string(kMaxWarmIterations) +
                                "], got " + std::to_string(iterations));
  }
  const bool fp = params.kind == SolverKind::kFp || params.kind == SolverKind::kLinearFp;
  if (!std::isfinite(params.warm_prior) || params.warm_prior < 0.0) {
    throw std::invalid_argument("warm_prior must be finite and >= 0, got " + std::to_string(params.warm_prior));
  }
  if (fp && params.warm_prior != 0.0) {
    throw std::invalid_argument("warm_prior applies to the CFR solvers' regrets; " + solver_name(params) +
                                " has none");
  }
  if (!fp && params.off_path != OffPath::kSkip) {
    throw std::invalid_argument("warm start of the CFR solvers supports off_path 'skip' only, not '" +
                                off_path_name(params.off_path) + "'");
  }
  if (params.leaf_beliefs != LeafBeliefs::kIterate) {
    throw std::invalid_argument("warm start is not defined for " + solver_name(params) +
                                " (its leaf values follow the average policy's history)");
  }
}

void SubgameSolver::warm_start(const std::vector<double>& policy, int iterations) {
  if (iterations < 0 || iterations > kMaxWarmIterations) check_warm_start_params(params_, iterations);
  if (num_steps() != 0) {
    throw std::invalid_argument("warm start needs a fresh solver; this one has made " + std::to_string(num_steps()) +
                                " steps");
  }
  check_warm_start_params(params_, iterations);
  const std::vector<double> sigma0 = checked_warm_policy(*game_, *tree_, policy);
  if (iterations == 0) return;  // no weight on sigma0: the cold start, untouched
  warm_iterations_ = iterations;
  if (is_fp()) warm_start_fp(sigma0, iterations);
  else warm_start_cfr(sigma0, iterations);
  steps_ = {iterations, iterations};
}

void SubgameSolver::warm_start_cfr(const std::vector<double>& sigma0, int K) {
  const PublicTree& t = *tree_;
  const int H = H_;
  const size_t cells = static_cast<size_t>(t.size()) * H;
  std::vector<detail::Discounts> d(static_cast<size_t>(K) + 1);
  for (int k = 1; k <= K; ++k) d[k] = detail::discounts_after(params_, k);

  // Both players' instantaneous regrets of sigma0 against sigma0 (reach_ of both under
  // sigma0, as compute_leaf_values reads them), turned into K updates' regrets. `matched`
  // receives the regrets regret matching reads at update K (before its discount).
  current_ = sigma0;
  for (int p = 0; p < 2; ++p) compute_reach(t, H, current_, p, root_reach_[p].data(), &reach_[p]);
  const std::array<std::vector<double>, 2> reach0 = reach_;
  std::vector<double> matched(cells, 0.0);
  for (int p = 0; p < 2; ++p) {
    compute_leaf_values(p);
    backup_policy_values(t, H, current_, p, &values_);
    root_values_mean_[p].assign(values_.begin(), values_.begin() + H);
    root_values_last_[p] = root_values_mean_[p];
    std::vector<double> scale(H, 0.0);
    for (int n : t.decision_nodes) {
      if (t.player[n] != p) continue;
      const double* vn = &values_[static_cast<size_t>(n) * H];
      if (params_.warm_prior > 0.0) {
        std::fill(scale.begin(), scale.end(), 0.0);
        for (int c = t.first_child[n]; c < t.first_child[n] + t.num_children[n]; ++c) {
          for (int h = 0; h < H; ++h) scale[h] = std::max(scale[h], std::abs(values_[static_cast<size_t>(c) * H + h]));
        }
      }
      for (int c = t.first_child[n]; c < t.first_child[n] + t.num_children[n]; ++c) {
        for (int h = 0; h < H; ++h) {
          const size_t i = static_cast<size_t>(c) * H + h;
          double r = values_[i] - vn[h];
          if (params_.warm_prior > 0.0) r += params_.warm_prior * scale[h] * sigma0[i];
          double regret = 0.0, before = 0.0;
          for (int k = 1; k <= K; ++k) {  // as the update pass: add, floor (CFR+), match, discount
            regret += r;
            if (d[k].floor_regrets) regret = regret > 0.0 ? regret : 0.0;
            before = regret;
            regret *= regret > 0.0 ? d[k].pos : d[k].neg;
          }
          regrets_[i] = regret;
          matched[i] = before;
        }
      }
    }
  }

  // The iterate after update K: regret matching, sigma0 where no regret is positive.
  warm_fallback_ = sigma0;
  for (int n : t.decision_nodes) {
    const int begin = t.first_child[n], end = begin + t.num_children[n];
    for (int h = 0; h < H; ++h) {
      double total = 0.0;
      for (int c = begin; c < end; ++c) total += std::max(matched[static_cast<size_t>(c) * H + h], 0.0);
      for (int c = begin; c < end; ++c) {
        const size_t i = static_cast<size_t>(c) * H + h;
        current_[i] = total > 0.0 ? std::max(matched[i], 0.0) / total : sigma0[i];
      }
    }
  }
  for (int p = 0; p < 2; ++p) compute_reach(t, H, current_, p, root_reach_[p].data(), &reach_[p]);

  // The average sum: K policies sigma0 and then the iterate, by the update pass's recurrence
  // (x = own reach at the node times the policy = the reach at the child).
  for (int n : t.decision_nodes) {
    const int p = t.player[n];
    for (int c = t.first_child[n]; c < t.first_child[n] + t.num_children[n]; ++c) {
      for (int h = 0; h < H; ++h) {
        const size_t i = static_cast<size_t>(c) * H + h;
        double s = reach0[p][i];  // the policy played at update 1, in the average with weight 1
        for (int k = 1; k <= K; ++k) s = s * d[k].strat + (k < K ? reach0[p][i] : reach_[p][i]);
        sum_[i] = s;
      }
    }
  }
  average_stale_ = true;
}

void SubgameSolver::warm_start_fp(const std::vector<double>& sigma0, int K) {
  const PublicTree& t = *tree_;
  const int H = H_;
  // The weight of the average after K updates relative to one policy's: w <- w * strat + 1.
  double w = 1.0;
  for (int k = 1; k <= K; ++k) w = w * (params_.kind == SolverKind::kLinearFp ? k / (k + 1.0) : 1.0) + 1.0;
  for (int p = 0; p < 2; ++p) compute_reach(t, H, sigma0, p, root_reach_[p].data(), &reach_[p]);
  for (int n : t.decision_nodes) {
    const int p = t.player[n];
    for (int c = t.first_child[n]; c < t.first_child[n] + t.num_children[n]; ++c) {
      for (int h = 0; h < H; ++h) {
        const size_t i = static_cast<size_t>(c) * H + h;
        sum_[i] = reach_[p][i] * w;
      }
    }
  }
  // The average FP plays: sigma0 wherever its own reach is positive, uniform elsewhere (as
  // fp_step normalises it). The root values: best responses to it, as each update records.
  normalize_policy(t, H, sum_, &average_);
  average_stale_ = false;
  for (int p = 0; p < 2; ++p) compute_reach(t, H, average_, p, root_reach_[p].data(), &reach_[p]);
  for (int p = 0; p < 2; ++p) {
    compute_leaf_values(p);
    backup_best_response(t, H, p, &values_, nullptr);
    root_values_mean_[p].assign(values_.begin(), values_.begin() + H);
    root_values_last_[p] = root_values_mean_[p];
  }
}

}  // namespace rebel
