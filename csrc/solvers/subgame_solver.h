// Tabular solvers over a public tree, vectorised over hands, alternating updates.
//
// One class serves both the full game (root = game start, beliefs = prior, no depth
// limit) and ReBeL's depth-limited subgames (root = any public belief state; the values
// of pseudo-leaves come from a ValueNet queried, once per iteration, with the leaf PBSs
// induced by the current iterate: CFR-D).
//
// Iteration counting follows the paper: one step() is one half-iteration that updates
// a single player (player 0 on even steps), so "1024 iterations" = 512 per player. The
// initial uniform policy counts once in the average. Linear weighting: the t-th update
// of a player gets weight t+1 in its average policy (uniform: 1) and weight t in its
// regrets, and the root values are averaged with weight t.
// warm_start() replaces the uniform start by a given policy counted as K updates of each
// player (csrc/solvers/warm_start.cc).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/game.h"
#include "core/tree.h"
#include "core/value_net.h"

namespace rebel {

enum class SolverKind { kCfr, kLinearCfr, kCfrPlus, kDcfr, kFp, kLinearFp };

// Parses "cfr", "lcfr", "cfr+", "dcfr", "fp", "lfp"; throws std::invalid_argument.
SolverKind parse_solver_kind(const std::string& name);
std::string solver_kind_name(SolverKind kind);

// Which policy the pseudo-leaf PBSs of a depth-limited subgame come from (CFR solvers).
//   kIterate: the current iterate's (CFR-D, the paper's Algorithm 1).
//   kAverage: CFR-AVG (the paper's appendix), sound form: the leaf PBS is the one the
//     average policy induces, beta_bar^t, and iteration t's leaf values v_t are chosen so
//     that the weighted mean of v_1..v_t equals V(beta_bar^t): with linear weights (update
//     t weighs t), v_t = ((t+1)/2) V(beta_bar^t) - ((t-1)/2) V(beta_bar^(t-1)).
//   kAverageDirect: CFR-AVG's modified form: v_t = V(beta_bar^t) itself.
// The net's per-hand values (given the opponent's normalised average beliefs) are scaled
// by the opponent's reach mass under the current iterate, as CFR-D scales its own.
// Only with OffPath::kSkip (the constructor refuses the other modes).
enum class LeafBeliefs : uint8_t { kIterate, kAverage, kAverageDirect };

// What the CFR solvers do at nodes the current iterate reaches with probability exactly 0
// (regret matching gives many actions probability 0, so every iteration has such nodes).
// Reaches are kept as leading-order terms c * eps^k of an infinitesimal eps, where k counts
// the actions on the path that the iterate plays with probability 0 ("trembles"); the
// computation is the exact eps -> 0 limit, with no eps in double precision and no underflow.
//   kSkip: a player's regrets are updated only where the opponent's reach is positive; a
//     pseudo-leaf the opponent does not reach is not queried and is worth 0.
//   kFloor: the limit of the original ReBeL code, whose regret matching floors every regret
//     at eps = 1e-80 (max(R, eps), normalised) and whose belief normalisation adds eps to
//     every reach. A zero-probability action is played with probability eps / total (total:
//     the hand's positive-regret sum), reaches of order 1 are kept, and regrets whose
//     leading term has order 1 play in proportion to max(R, 1) (the floor compared with
//     regrets that are themselves of order eps); order 2 and beyond plays uniformly, and a
//     pseudo-leaf of order 1 is queried with beliefs (c + 1) / sum(c + 1), as eps-smoothing
//     gives.
//   kConditional: every node is updated with values conditional on reaching it: the
//     opponent's reach at the node is its leading-order term (a zero-probability action
//     counts as taken with weight 1, whatever the hand), regrets keep their leading order
//     and regret matching uses it scale-free; pseudo-leaves are queried with the
//     conditional beliefs of both players.
// In both, a node's values are those of the opponent's lowest order there (exact for games
// whose hands are independent, such as Liar's Dice) and the regrets of each node and hand
// keep the lowest order that carried a nonzero regret.
// The fictitious-play solvers ignore the mode: they play averages that include the uniform
// start, so they reach every node a hand with positive belief can reach.
enum class OffPath : uint8_t { kSkip, kFloor, kConditional };

// Parses "skip", "floor", "conditional"; throws std::invalid_argument.
OffPath parse_off_path(const std::string& name);
std::string off_path_name(OffPath mode);

struct SolverParams {
  SolverKind kind = SolverKind::kLinearCfr;
  double dcfr_alpha = 1.5, dcfr_beta = 0.0, dcfr_gamma = 2.0;
  bool optimistic = false;  // FP: best-respond to the average with the last BR counted twice
  OffPath off_path = OffPath::kSkip;
  LeafBeliefs leaf_beliefs = LeafBeliefs::kIterate;
  // CFR kinds' warm start only: the regret prior toward sigma0 (lambda >= 0; 0 = none). Each
  // of the K warm updates adds lambda * s(n, h) * sigma0(n, a, h) to the regret of action a,
  // with s(n, h) the largest |counterfactual value| of hand h over n's children, so regret
  // matching starts from sigma0 rather than from the actions that beat it
  // (csrc/solvers/warm_start.cc).
  double warm_prior = 0.0;
  // CFR-AVG only ("cfr-avg-play-avg", "cfr-avg-modified-play-avg"): a random-iteration stop
  // (mode (b), the self-play walk) plays the average policy so far instead of the iterate
  // and propagates beliefs with it, so the next search starts at the average's PBS, the PBS
  // at which CFR-AVG computed that leaf's values. Ours, not the paper's protocol.
  bool play_average = false;
};

// The search solvers by name: the kinds above, plus "flop" (linear FP, optimistic: the
// paper's fictitious linear optimistic play), "cfr-avg" (linear CFR, LeafBeliefs::kAverage)
// and "cfr-avg-modified" (linear CFR, LeafBeliefs::kAverageDirect), each also with the
// suffix "-play-avg" (SolverParams::play_average). Throws
// std::invalid_argument naming the choices.
SolverParams parse_solver(const std::string& name);
// The name parse_solver reads back into `params`' kind, optimism and leaf beliefs.
std::string solver_name(const SolverParams& params);

using Beliefs = std::array<std::vector<double>, 2>;

// The largest `iterations` SubgameSolver::warm_start accepts.
constexpr int kMaxWarmIterations = 100000;

// Throws std::invalid_argument unless a solver with `params` can be warm-started for
// `iterations` updates: iterations in [0, kMaxWarmIterations], a CFR kind with off_path
// kSkip or an FP kind, and leaf beliefs kIterate (CFR-AVG has no warm start). What
// warm_start checks besides the policy and the fresh solver; searches check it up front.
void check_warm_start_params(const SolverParams& params, int iterations);

class SubgameSolver {
 public:
  // `root_reach`: each player's reach vector at the root (the prior for a full game,
  // normalised beliefs for a PBS). `net` may be null only if the tree has no pseudo-leaves.
  SubgameSolver(GamePtr game, std::shared_ptr<const PublicTree> tree, Beliefs root_reach,
                SolverParams params, ValueNetPtr net = nullptr);

  // Warm start from `policy` (the layout of current_policy(): per child of a decision node,
  // per hand, the acting player's probability), as if each player had made `iterations`
  // updates while both played `policy` (csrc/solvers/warm_start.cc has the definition).
  // Only on a fresh solver (num_steps() == 0); 0 iterations changes nothing. The CFR kinds
  // need off_path kSkip. Throws std::invalid_argument on bad input.
  void warm_start(const std::vector<double>& policy, int iterations);
  // The `iterations` of warm_start (0 for a cold start); num_steps() counts 2 x them.
  int warm_iterations() const { return warm_iterations_; }

  void step();               // one half-iteration (player num_steps() % 2)
  void run(int iterations);  // `iterations` calls of step()

  int num_steps() const { return steps_[0] + steps_[1]; }
  bool is_fp() const;
  // Pseudo-leaf rows sent to the value net so far, and rows left out because the
  // opponent's reach mass there was 0 (kSkip; kFloor: of order 2 or more), for benchmarks
  // and diagnostics. With one hand per player a leaf's row never changes, so each leaf is
  // sent once per queried player and later iterations reuse the answer (counted in neither).
  long long leaf_queries() const { return leaf_queries_; }
  long long leaf_queries_skipped() const { return leaf_queries_skipped_; }

  // The policy played at this iteration: CFR's regret-matching iterate; FP's average.
  const std::vector<double>& current_policy() const { return is_fp() ? average_ : current_; }
  // The (weighted) average policy.
  // CFR normalises the running sum only when asked (not every iteration).
  const std::vector<double>& average_policy() const;
  // The policy a stop at this iteration plays and propagates beliefs with (mode (b) of the
  // test-time search, the self-play walk): current_policy() (CFR's iterate, FP's average),
  // or with SolverParams::play_average (the "-play-avg" CFR-AVG solvers) the average.
  const std::vector<double>& played_policy() const {
    return params_.play_average ? average_policy() : current_policy();
  }
  // Averaged root values per hand (counterfactual, given the root reaches): the ReBeL
  // training target. Zero before the player's first update.
  const std::vector<double>& root_values(int player) const { return root_values_mean_[player]; }
  const std::vector<double>& last_root_values(int player) const { return root_values_last_[player]; }

  const PublicTree& tree() const { return *tree_; }
  std::shared_ptr<const PublicTree> tree_ptr() const { return tree_; }
  const Game& game() const { return *game_; }
  const Beliefs& root_reach() const { return root_reach_; }
  const SolverParams& params() const { return params_; }
  // True when the CFR passes keep reaches as leading-order terms (off_path != kSkip).
  bool tracks_orders() const { return !orders_[0].empty(); }
  // Beliefs of `player` at `node` under the current iterate (CFR) normalised as the
  // off-path mode prescribes (see normalize_reach); for kSkip and FP, the normalised reach.
  void iterate_beliefs(int node, int player, double* out) const;

 private:
  void cfr_step(int player);
  void cfr_step_orders(int player);
  void fp_step(int player);
  void compute_leaf_values(int player);
  // CFR-AVG: the net's conditional values for the leaves queried this iteration, combined
  // with the previous ones as LeafBeliefs prescribes (leaf_out_ in place).
  void combine_average_leaf_values(int player);
  void update_root_mean(int player, int update_index);
  void warm_start_cfr(const std::vector<double>& policy, int iterations);
  void warm_start_fp(const std::vector<double>& policy, int iterations);

  GamePtr game_;
  std::shared_ptr<const PublicTree> tree_;
  Beliefs root_reach_;
  SolverParams params_;
  ValueNetPtr net_;
  int H_;
  std::array<int, 2> steps_{0, 0};

  std::vector<double> current_, sum_, regrets_, values_;
  std::vector<double> scratch_;  // one value per hand
  mutable std::vector<double> average_;
  mutable bool average_stale_ = false;
  std::array<std::vector<double>, 2> reach_;  // kSkip: reach; otherwise leading coefficients
  // Off-path modes only (empty for kSkip and FP): the order k of every reach_ entry, the
  // order of the regrets of every node and hand (kNeverUpdated before the first update)
  // and, per iteration, the opponent's lowest order at every node with its reach at that
  // order.
  std::array<std::vector<uint16_t>, 2> orders_;
  std::vector<uint16_t> regret_order_, node_order_;
  std::vector<double> opp_leading_;
  std::vector<double> scratch_keep_, scratch_replace_;  // one value per hand
  std::array<std::vector<double>, 2> root_values_mean_, root_values_last_;
  std::vector<int> best_child_;
  // Warm start (CFR kinds): the start policy, played where a hand has no positive regret
  // (empty for a cold start: uniform there).
  std::vector<double> warm_fallback_;
  int warm_iterations_ = 0;

  // Pseudo-leaf query buffers (rows + structured view), reused every iteration.
  std::vector<float> leaf_rows_;       // [leaf] header + public features of every pseudo-leaf
  std::vector<float> query_rows_;      // [slot] rows of the leaves queried this iteration
  std::vector<double> query_beliefs_;  // [slot][player][hand], normalised
  struct QueriedLeaf {
    int node;
    int leaf;  // index in tree_->pseudo_leaves
    double opponent_mass;
  };
  std::vector<QueriedLeaf> queried_leaves_;  // [slot]
  long long leaf_queries_ = 0, leaf_queries_skipped_ = 0;
  std::vector<double> leaf_out_;
  std::vector<double> single_hand_values_;  // one hand per player: [leaf][player] net answers, NaN until asked
  LeafQueryBatch batch_;
  // CFR-AVG only: both players' reaches under the average policy (recomputed every
  // update), and per player the previous conditional leaf values V(beta_bar^(t-1))
  // ([leaf][hand]) of the sound form.
  std::array<std::vector<double>, 2> average_reach_;
  std::array<std::vector<double>, 2> previous_leaf_values_;
};

// Normalises a belief vector; all-zero mass gives the uniform distribution.
void normalize_beliefs(const double* in, int H, double* out);

// Beliefs from a reach vector given as leading-order terms coef[h] * eps^order[h]. With
// K = min order: kConditional normalises the order-K coefficients; kFloor normalises the
// order-0 coefficients if K = 0, gives (coef + 1) / sum(coef + 1) over the order-1 terms if
// K = 1 (the limit of adding eps to every reach before normalising) and the uniform
// distribution if K >= 2; kSkip ignores the orders (normalize_beliefs of the coefficients).
void normalize_reach(const double* coef, const uint16_t* order, int H, OffPath mode, double* out);

// Validates beliefs (length, finite, non-negative, positive mass) and normalises them.
std::vector<double> checked_beliefs(const std::vector<double>& beliefs, int H, const char* what);

}  // namespace rebel
