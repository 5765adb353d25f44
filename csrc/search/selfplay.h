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
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

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
};

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
};

class SelfPlayGenerator {
 public:
  SelfPlayGenerator(GamePtr game, SelfPlayParams params, ValueNetPtr net);

  // One self-play step from the PBS (history, beliefs); all randomness comes from `seed`.
  // `forced_iteration` >= 0 replaces the sampled iteration (tests). Thread-safe.
  SelfPlayStep step(const History& history, const Beliefs& beliefs, uint64_t seed, int forced_iteration = -1,
                    bool keep_iterate = false, const CancelFlag* cancel = nullptr) const;

  // Draws the half-step count at which the next root is sampled from uniform01 in [0, 1).
  int sample_iteration(double uniform01) const;

  // The subgame tree used at `history` (built once, then shared).
  std::shared_ptr<const PublicTree> subgame(const History& history) const;

  const Game& game() const { return *game_; }
  const SelfPlayParams& params() const { return params_; }

 private:
  GamePtr game_;
  SelfPlayParams params_;
  ValueNetPtr net_;
  mutable std::mutex cache_mutex_;
  mutable std::map<History, std::shared_ptr<const PublicTree>> cache_;
};

}  // namespace rebel
