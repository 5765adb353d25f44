// One step of ReBeL's self-play data generation (Algorithm 1 of the paper), done entirely
// in C++ so the Python episode loop only calls it and stores the result.
//
// At a public belief state the step builds (once per public state, cached) the
// depth-limited subgame, runs T half-iterations of CFR-D (or FP) with the value net, and
// at a sampled iteration t picks the next root:
//   * one exploring player is drawn uniformly;
//   * a pair of hands is drawn from the root beliefs (joint with the game's card-removal
//     weights when hands are not independent);
//   * the subgame is walked from the root with iterate t's policy for the hand each player
//     holds, except that at the exploring player's nodes a uniformly random legal action is
//     taken with probability epsilon;
//   * both players' beliefs are propagated along the walked path with iterate t's policy
//     (never with the exploration);
//   * in a game with public chance the subgame ends with its betting round (the dealt cards
//     are its leaves, as at test time): the walk draws the card given the walk's hands,
//     both beliefs take its chance factors, and the next root is the state after the deal.
// The remaining iterations then finish, and the linearly averaged root values of both
// players are the two training examples of the step.
//
// Policy net (Algorithm 1's InitializePolicy): with warm_iterations K > 0 the solver is
// first warm-started from policy_net_start(...) for K updates, exactly as at test time
// (the sampled iteration's weights become K + i/2 + 1). With collect_policy the step also
// emits D_pi, the policy net's training data: one example per decision node n of the
// subgame (not pseudo-leaves, terminals or chance nodes) whose PBS under the final AVERAGE
// policy gives both players positive mass (and, with card removal, admits a deal):
//   row:    the query row of core/policy_net.h at n (row[0] = row[1] = the actor), beliefs
//           both players' normalised reaches under the average policy from the root beliefs;
//   target: the average policy at n for every hand of the actor, [H][A], 0 on illegal actions;
//   legal:  [A], 1 on the actions legal at n;
//   weight: [H], the actor's normalised beliefs at n.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/policy_net.h"
#include "core/tree.h"
#include "core/value_net.h"
#include "search/test_time_search.h"
#include "solvers/subgame_solver.h"

namespace rebel {

enum class IterationSampling {
  kLinear,   // even half-step i < T with weight i/2 + 1 (the paper's Algorithm 1; = test time)
  kUniform,  // even half-step i < T, uniformly (the original code's choice)
};

struct SelfPlayParams {
  SolverParams solver;
  int depth = 2;             // actions per subgame
  int iterations = 1024;     // half-iterations T per subgame
  double epsilon = 0.25;     // exploration probability at the exploring player's nodes
  IterationSampling sampling = IterationSampling::kLinear;
  // Solve the whole game below each root (no pseudo-leaves, no net) but still walk only
  // `depth` actions: the labels are then the exact oracle values of the visited PBSs.
  bool full_depth_solve = false;
  int warm_iterations = 0;      // K: the policy net's warm start, as SearchParams::warm_iterations
  bool collect_policy = false;  // emit D_pi (SelfPlayStep::policy_*)
  // Reuse the solve of the initial public state (the empty history) while the beliefs and
  // the nets' tokens stay the same (below). Steps are bit for bit those without it.
  bool reuse_initial_solve = true;
};

// Every episode starts at the same PBS, the initial one, and only the seed differs between
// its steps: the solve itself (all T iterations, hence every iterate the walk may sample and
// the root values) depends on the PBS, the parameters and the net alone. With
// reuse_initial_solve the generator keeps the last such solve, keyed by the beliefs and the
// net's values_token() (which changes whenever new weights are installed), and later steps
// at that PBS only draw their iteration, hands and walk from it. With the policy-net warm
// start the key also holds the policy net's policies_token(), since that net changes too. It
// applies where both tokens are non-zero (the full-depth solve asks no value net), at sampled
// (even) iterations, and when the iterates fit in
// kMaxInitialSolveBytes; otherwise the step solves as before. A game of few subgames an
// episode gains most: in Leduc hold'em the initial PBS is one of at most two steps.
constexpr size_t kMaxInitialSolveBytes = size_t{256} << 20;

struct SelfPlayStep {
  // One query row per player (layout of core/value_net.h) and its target values.
  std::vector<float> rows;     // 2 * query_size
  std::vector<float> targets;  // 2 * num_hands
  int sampled_iteration = 0;   // half-steps done before the walk
  int exploring_player = 0;
  std::array<int, 2> hands{0, 0};  // the hands drawn for the walk
  History next_history;        // the walked-to node (terminal => the episode ends)
  bool next_terminal = false;  // the episode ends: a terminal, or a PBS no deal fits (below)
  bool next_no_deal = false;   // the walk's end admits no deal of hands (exploration; see selfplay.cc)
  Beliefs next_beliefs;        // normalised; empty when next_terminal
  std::vector<double> iterate;  // iterate t's policy over the subgame (only if asked)
  double net_seconds = 0.0;    // wall time inside the value net during this step
  // D_pi (collect_policy; definition above), policy_count examples of A = num_actions:
  std::vector<float> policy_rows;     // [count][query_size]
  std::vector<float> policy_targets;  // [count][H][A]
  std::vector<float> policy_weights;  // [count][H]
  std::vector<uint8_t> policy_legal;  // [count][A], 0 or 1
  int policy_count = 0;
  int num_actions = 0;  // the game's A (the shape of the policy_* arrays)
};

class SelfPlayGenerator {
 public:
  // Refuses warm_iterations > 0 without a policy net or with a solver that has no warm
  // start (as TestTimeSearch); a policy net with K == 0 is ignored.
  SelfPlayGenerator(GamePtr game, SelfPlayParams params, ValueNetPtr net, PolicyNetPtr policy_net = nullptr);

  // One self-play step from the PBS (history, beliefs); all randomness comes from `seed`.
  // `forced_iteration` >= 0 replaces the sampled iteration (tests). Thread-safe.
  SelfPlayStep step(const History& history, const Beliefs& beliefs, uint64_t seed, int forced_iteration = -1,
                    bool keep_iterate = false, const CancelFlag* cancel = nullptr) const;

  // Draws the half-step count at which the next root is sampled from uniform01 in [0, 1).
  int sample_iteration(double uniform01) const;

  // The subgame tree used at `history` (built once, then shared).
  std::shared_ptr<const PublicTree> subgame(const History& history) const;

  // How many steps reused the initial PBS's solve, and how many solved it (the tests'
  // and benchmarks' view of the cache).
  long initial_solves_reused() const { return reused_.load(); }
  long initial_solves_computed() const { return computed_.load(); }

  const Game& game() const { return *game_; }
  const SelfPlayParams& params() const { return params_; }

 private:
  GamePtr game_;
  SelfPlayParams params_;
  ValueNetPtr net_;
  PolicyNetPtr policy_net_;
  mutable std::mutex cache_mutex_;
  mutable std::map<History, std::shared_ptr<const PublicTree>> cache_;

  // The initial PBS's solve (reuse_initial_solve).
  struct SolveTokens {
    uint64_t values = 0;    // the value net's values_token() (1: the full-depth solve)
    uint64_t policies = 0;  // the policy net's policies_token() (1: no warm start)
    bool usable() const { return values != 0 && policies != 0; }
    bool operator==(const SolveTokens& other) const { return values == other.values && policies == other.policies; }
  };
  struct InitialSolve {
    Beliefs beliefs;         // the step's beliefs, as given (with tokens: the key)
    SolveTokens tokens;      // the nets' tokens during the solve
    std::vector<std::vector<double>> iterates;  // [t / 2]: the played policy after t half-steps, t even < T
    Beliefs root;            // the solver's normalised root reach
    std::array<std::vector<double>, 2> values;  // both players' root values after T half-steps
    std::vector<double> average;                 // the average policy (collect_policy only)
  };
  SolveTokens solve_tokens() const;
  // A new solve of `tree` from `beliefs`, warm-started from the policy net when one is set
  // (Algorithm 1's InitializePolicy). `timed` (may be null) is its value net. Every solve of a
  // step, kept or not, starts here, so the kept solve's iterates are those step() would run.
  void start_solve(std::optional<SubgameSolver>& solver, const std::shared_ptr<const PublicTree>& tree,
                   const Beliefs& beliefs, ValueNetPtr timed) const;
  bool reuses_initial_solve(const History& history, const PublicTree& tree, int forced_iteration) const;
  std::shared_ptr<const InitialSolve> initial_solve(const std::shared_ptr<const PublicTree>& tree,
                                                    const Beliefs& beliefs, const CancelFlag* cancel,
                                                    double* net_seconds) const;
  mutable std::mutex initial_mutex_;  // held for a whole solve: a second loop waits for the first's
  mutable std::shared_ptr<const InitialSolve> initial_;
  mutable std::atomic<long> reused_{0}, computed_{0};
};

}  // namespace rebel
