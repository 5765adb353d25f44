// Test-time search ("safe search", ReBeL paper §6 / Theorem 3): the full-game policy
// obtained by running a depth-limited subgame search at every public state reached.
//
// Starting at the initial PBS, the subgame rooted there is solved; its policy is copied
// for every internal node of the subgame, beliefs are propagated with it, and a new
// search starts at every pseudo-leaf. Two modes:
//   (a) kAverage: each subgame's average policy (deterministic);
//   (b) kSampled: the paper's mode: each subgame stops at a random iteration (linear
//       weights: even i < T with weight i/2 + 1, as both players then have i/2
//       updates) and that iterate is played and used to propagate beliefs.
// Warm start (warm_iterations K > 0, with a policy net): each subgame solve first calls
// SubgameSolver::warm_start(policy_net_start(...), K) (search/policy_start.h), then runs
// the usual `iterations` half-steps T. Mode (b) then stops after even i < T half-steps with
// weight K + i/2 + 1, the linear weight the warm-started solver gives that iterate.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "core/policy_net.h"
#include "core/tree.h"
#include "core/value_net.h"
#include "solvers/subgame_solver.h"

namespace rebel {

using CancelFlag = std::atomic<bool>;

struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("cancelled") {}
};

struct SearchParams {
  SolverParams solver;
  int depth = 2;          // events below each search root (a subgame also ends at a public deal)
  int iterations = 1024;  // half-iterations per subgame
  int warm_iterations = 0;  // K: updates of each player the policy net's warm start counts as
  // Games with public chance: where a subgame ends at a deal. kAfterDeal (the default, and
  // self-play's): each dealt card is a leaf and the next searches start after the deal.
  // kAtDeal: the deal is the leaf (the PBS before the card) and the next search, rooted
  // there, deals the card inside its own subgame.
  ChanceLeaves chance_leaves = ChanceLeaves::kAfterDeal;
};

enum class SearchMode { kAverage, kSampled };

class TestTimeSearch {
 public:
  // Builds (once) the subgame trees of every public state where a search can start.
  // Throws std::invalid_argument when warm_iterations > 0 cannot be served: no policy net,
  // K out of range, or a solver without a warm start (check_warm_start_params). A policy
  // net with K == 0 is ignored.
  TestTimeSearch(GamePtr game, SearchParams params, ValueNetPtr net, PolicyNetPtr policy_net = nullptr);

  const Game& game() const { return *game_; }
  const PublicTree& full_tree() const { return *full_tree_; }
  std::shared_ptr<const PublicTree> full_tree_ptr() const { return full_tree_; }
  const SearchParams& params() const { return params_; }

  // Full-game policy of mode (a). `progress`, if given, counts the subgames solved (of
  // num_search_roots()).
  std::vector<double> average_policy(const CancelFlag* cancel = nullptr,
                                     std::atomic<long>* progress = nullptr) const;
  // One full-game policy of mode (b); all randomness comes from `seed`.
  std::vector<double> sampled_policy(uint64_t seed, const CancelFlag* cancel = nullptr) const;
  // The mode-(b) policies of generator seeds `seeds`, each bit for bit sampled_policy(seed),
  // computed together on `threads` threads. A sample draws the stops of its searches in a
  // fixed order, so they can be drawn first; samples whose stops agree at every search above
  // a subgame reach it with the same PBS, and its solve runs once for all of them, up to the
  // last stop any of them needs (the game's root: once for all samples). `progress` counts
  // finished samples.
  std::vector<std::vector<double>> sampled_policies(const std::vector<uint64_t>& seeds, int threads,
                                                    const CancelFlag* cancel = nullptr,
                                                    std::atomic<long>* progress = nullptr) const;
  // Number of subgame searches one full-game policy needs.
  int num_search_roots() const;

  // Memory sampled_policies needs per sample on top of its policy: at most one stop group a
  // sample on each level of the recursion, each holding the beliefs at its subgame's
  // pseudo-leaves (levels x largest leaf count x 2 x hands doubles).
  double shared_bytes_per_sample() const { return shared_bytes_per_sample_; }
  // How many samples evaluate_sampled and sampled_contribution_sum hand to one call of
  // sampled_policies (sharing solves only within it): at most 1,024, 1 GiB of policies and
  // 512 MiB of shared leaf beliefs (sample_chunk_size). Results do not depend on it.
  int samples_per_chunk() const;

  // Draws the stopping iteration of mode (b) from a uniform number in [0, 1).
  int sample_iteration(double uniform01) const;

  // A fresh solver of the subgame `tree` at root PBS `beliefs`, warm-started when K > 0.
  SubgameSolver make_solver(std::shared_ptr<const PublicTree> tree, const Beliefs& beliefs) const;

 private:
  struct Subgame {
    std::shared_ptr<const PublicTree> tree;
    std::vector<int> to_full;  // subgame node -> full-tree node
    // Games with public chance: per pseudo-leaf, the hands its public cards leave possible
    // (possible_hands, computed once here rather than at every search).
    std::vector<std::vector<char>> leaf_possible;
  };
  template <class Rng>
  void search(int full_node, const Beliefs& beliefs, SearchMode mode, Rng* rng,
              std::vector<double>* policy, const CancelFlag* cancel, std::atomic<long>* progress = nullptr) const;

  // sampled_policies: the samples (indices into `stops`) that stop a subgame at one
  // iteration, and the beliefs at its pseudo-leaves they all go on with.
  struct StopGroup {
    std::vector<int> members;
    std::vector<double> leaf_beliefs;  // [leaf][player][hand]
  };
  // Solves the subgame at `full_node` from `beliefs` once for `members`, writes each
  // member's stopped iterate into its policy and returns the members grouped by stop.
  std::vector<StopGroup> solve_for_members(int full_node, const Beliefs& beliefs, const std::vector<int>& members,
                                           const std::vector<std::vector<int>>& stops,
                                           std::vector<std::vector<double>>* policies, const CancelFlag* cancel) const;
  // The searches below `full_node`'s pseudo-leaves for one of its stop groups, recursively.
  void descend(int full_node, const StopGroup& group, const std::vector<std::vector<int>>& stops,
               std::vector<std::vector<double>>* policies, const CancelFlag* cancel) const;

  // The PBS beliefs at every pseudo-leaf of `sg` ([leaf][player][hand]) under `played`, the
  // policy `solver` plays: the normalised reach; for a CFR iterate under an off-path mode,
  // the solver's leading-order reach normalised as that mode prescribes (normalize_reach).
  std::vector<double> leaf_beliefs(const Subgame& sg, const SubgameSolver& solver, const std::vector<double>& played,
                                   bool iterate) const;

  // Mode (b) at the game's root: the root PBS never changes, so the solver's trajectory is
  // the same for every sampled policy. Its current iterate at every even iteration, with
  // the leaf beliefs it induces, is recorded once (lazily, thread-safe) and shared by all
  // samples.
  struct RootIterate {
    std::vector<double> policy;
    std::vector<double> leaf_beliefs;
  };
  const RootIterate& root_iterate(int iteration, const CancelFlag* cancel) const;

  GamePtr game_;
  SearchParams params_;
  bool share_root_trajectory_ = false;
  double shared_bytes_per_sample_ = 0.0;
  mutable std::mutex root_mutex_;
  mutable std::vector<RootIterate> root_iterates_;  // [iteration / 2]
  ValueNetPtr net_;
  PolicyNetPtr policy_net_;
  std::shared_ptr<const PublicTree> full_tree_;
  std::vector<std::unique_ptr<Subgame>> subgames_;  // by full node; null if never a root
  // The search roots in the order a mode-(b) sample draws their stopping iterations (the
  // recursion's pre-order), and each root's position in it (-1: not a root).
  std::vector<int> draw_order_;
  std::vector<int> draw_index_;
};

struct SampledEvaluation {
  std::vector<int> num_policies;                  // 1, 2, 4, ... and N itself
  std::vector<double> exploitability;             // of the reach-weighted average
  std::vector<std::array<double, 2>> br_values;
  std::vector<double> average_policy;             // the average of all N policies
};

// Samples `num_policies` mode-(b) policies (sample k uses a generator seeded from
// (seed, k)), averages them reach-weighted in the order k = 0, 1, ... and evaluates the
// exact exploitability of the average at every power of two and at N. The result
// depends on the seed only, not on the number of threads. `progress` counts finished
// samples.
SampledEvaluation evaluate_sampled(const TestTimeSearch& search, int num_policies, int threads,
                                   uint64_t seed, const CancelFlag* cancel = nullptr,
                                   std::atomic<long>* progress = nullptr);

// The reach-weighted sum of samples k in [begin, end) (each sample as in evaluate_sampled,
// added in the order k); evaluate_mixture_sum turns a sum over k in [0, n) into the average
// of those n policies and its exact exploitability. Splitting [0, N) into ranges, summing
// the ranges in order and evaluating gives evaluate_sampled's numbers up to rounding (what
// a distributed evaluation does).
std::vector<double> sampled_contribution_sum(const TestTimeSearch& search, int begin, int end, int threads,
                                             uint64_t seed, const CancelFlag* cancel = nullptr,
                                             std::atomic<long>* progress = nullptr);

struct MixtureEvaluation {
  std::vector<double> policy;  // the normalised (behavioural) average
  double exploitability = 0.0;
  std::array<double, 2> br_values{};
};
MixtureEvaluation evaluate_mixture_sum(const Game& game, const PublicTree& tree, const std::vector<double>& sum);

// The half-step count at which a search stops, from uniform01 in [0, 1): an even i < T
// (after i half-steps each player has made i/2 updates), with weight offset + i/2 + 1
// (`linear`, the paper's; offset K after a warm start of K updates) or uniformly.
int sample_even_iteration(int iterations, double uniform01, bool linear = true, int offset = 0);

// The checks of a warm start requested at construction (TestTimeSearch, SelfPlayGenerator):
// K > 0 needs a policy net and a solver that has a warm start. Throws std::invalid_argument.
void check_search_warm_start(const SolverParams& solver, int warm_iterations, bool has_policy_net);

// Samples per call of sampled_policies: as many as fit 1 GiB of policies (`policy_bytes`
// each) and 512 MiB of shared leaf beliefs (`shared_bytes` each), at least 1, at most 1,024.
int sample_chunk_size(double policy_bytes, double shared_bytes);

// Deterministic 64-bit mixing (splitmix64), used to derive per-sample seeds.
uint64_t mix_seed(uint64_t seed, uint64_t index);

}  // namespace rebel
