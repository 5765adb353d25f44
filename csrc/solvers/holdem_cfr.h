// Full-game solvers on hold'em endgames (games/holdem_endgame.h): CFR, CFR+, linear CFR,
// discounted CFR (and DCFR with postflop-solver's schedule), with alternating updates,
// vectorised over each player's hands, float32 storage, threads over the chance outcomes of
// the first dealt street (over the root's actions where nothing is dealt), suit-isomorphic
// deals read off their stand-in's values where the game merges them; exact best response,
// exploitability and expected values in double.
//
// Per decision node the solver keeps, for every action and every hand of the actor, the
// cumulative regret and the cumulative strategy (the actor's reach-weighted strategy, so the
// average is the true average strategy of the iterations, discounted as the algorithm says).
//
// Discounting, iteration t = 1, 2, ...: before iteration t's regrets are added, positive and
// negative accumulated regrets are multiplied by `pos` and `neg`, and the accumulated strategy
// by `strat`:
//   cfr        1, 1, 1
//   cfr+       1, and negative regrets floored at 0 after each update; strat (t-1)/t (the
//              linear average)
//   lcfr       (t-1)/t for all three (weights proportional to t)
//   dcfr       (t-1)^1.5 / ((t-1)^1.5 + 1), 0.5, ((t-1)/t)^2 (Brown and Sandholm's alpha 1.5,
//              beta 0, gamma 2)
//   dcfr-pfs   postflop-solver's schedule: with s = t - 1, pos from max(s - 1, 0)^1.5 as above,
//              neg 0.5, strat (u / (u + 1))^3 with u = s less the largest power of 4 at most s
//              (the average restarts at iterations 1, 2, 5, 17, 65, 257, ...)
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "games/holdem_endgame.h"

namespace rebel {

class SpinPool;

namespace holdem {

enum class HoldemAlgorithm { kCfr, kCfrPlus, kLcfr, kDcfr, kDcfrPfs };

// "cfr", "cfr+", "lcfr", "dcfr", "dcfr-pfs"; std::invalid_argument otherwise.
HoldemAlgorithm parse_holdem_algorithm(const std::string& name);
std::string holdem_algorithm_name(HoldemAlgorithm a);

class HoldemSolver {
 public:
  // compressed: regrets and cumulative strategies in 16 bits with one float32 scale per node
  // (postflop-solver's compression: half the memory, decoded and re-encoded at every update).
  HoldemSolver(std::shared_ptr<const HoldemEndgame> game, HoldemAlgorithm algorithm, int threads,
               bool compressed = false);
  ~HoldemSolver();

  const HoldemEndgame& game() const { return *game_; }
  const std::shared_ptr<const HoldemEndgame>& shared_game() const { return game_; }
  HoldemAlgorithm algorithm() const { return algorithm_; }
  int threads() const { return threads_; }
  int iterations() const { return iterations_; }
  bool compressed() const { return compressed_; }
  // Bytes of the regret and strategy storage (with the per-node scales where compressed).
  int64_t storage_bytes() const {
    return static_cast<int64_t>((regrets_.size() + strategy_.size()) * sizeof(float) +
                                (regret_codes_.size() + strategy_codes_.size()) * sizeof(uint16_t) +
                                (regret_scale_.size() + strategy_scale_.size()) * sizeof(float));
  }

  // Runs n iterations (stops early, between iterations, when *cancel becomes true).
  void iterate(int n, const std::atomic<bool>* cancel = nullptr);

  // Depth-limited games (a search's subgame: leaves at the next street's deal). A leaf's values
  // for `player` are given per hand in chips per unit of the opponent's normalised beliefs (a
  // value net's output times the pot): at the leaf the solver multiplies them by the
  // opponent's reach mass there. A search sets them before each half-iteration from the
  // beliefs the current strategies give (leaf_reaches), then runs iterate_player(player):
  // player 0's half starts an iteration (its discounts), player 1's ends it. values: leaves x
  // hands(player), row-major. std::invalid_argument for a wrong size or a value not finite;
  // iterating a game with leaves before both players' values are set is an error.
  void set_leaf_values(int player, const std::vector<float>& values);
  void iterate_player(int player);
  // Each player's reach at every leaf (leaves x hands(player), row-major): its weights times its
  // own strategy on the path (current: regret matching or the lock; else the average), 0 on
  // hands a dealt card blocks; no chance probability.
  std::array<std::vector<double>, 2> leaf_reaches(bool average);

  // Each player's value (chips, expected over deals) when it best-responds to the other's
  // average strategy, and when both play their average strategies.
  // through_locks: the best response deviates at locked nodes too (the exploitability of the whole
  // strategy, locks included, rather than of the rest of the game).
  std::array<double, 2> best_response_values(bool through_locks = false);
  std::array<double, 2> average_values();
  // The same per hand, at the root: for each hand of each player, its counterfactual value
  // (chips x the opponent's weights on the hands compatible with it, expected over deals), for
  // every hand in the game's list, those of weight 0 included (a best response's value is what
  // the hand could win there).
  std::array<std::vector<double>, 2> best_response_hand_values();
  std::array<std::vector<double>, 2> average_hand_values();
  // (best response value of player 0 + that of player 1) / 2, in chips.
  double exploitability(bool through_locks = false);

  // The average (or current: regret-matched, or the lock where locked) strategy at a decision
  // node: actions x hands of its actor, row-major; a hand's row is uniform before any weight
  // reached it.
  std::vector<float> average_strategy(int node) const;
  std::vector<float> current_strategy(int node) const;

  // Node locking: the actor plays `strategy` (actions x hands, each hand's row a distribution)
  // at this decision node in every iteration; its regrets there stay untouched and its average
  // there is the locked strategy. Best responses keep locked nodes locked, so exploitability
  // measures the rest of the game (the locked player's best response may deviate only
  // elsewhere). std::invalid_argument for a non-decision node, a malformed strategy or a game
  // built with suit isomorphism.
  void lock(int node, const std::vector<float>& strategy);
  void unlock(int node);
  std::vector<int> locked_nodes() const;

  // Per-hand results at any node, both players playing their average strategies.
  struct NodeReport {
    std::array<std::vector<double>, 2> reach;   // weight x own strategy along the path (0 where blocked)
    std::array<std::vector<double>, 2> values;  // counterfactual values (chips x opponent reach)
    std::array<std::vector<double>, 2> ev;      // expected chips given the hand and reaching the node (NaN: no reach)
    std::array<std::vector<double>, 2> equity;  // showdown share against the opponent's hands there (NaN: none)
  };
  NodeReport node_report(int node);

 private:
  struct Workspace;
  enum class Mode { kBestResponse, kBestResponseThroughLocks, kAverage };
  void set_discounts(int t);
  // Calls body(action, thread, may_fork) for each action of a decision node: on the pool where
  // the spot forks over the root's actions (fork_actions_, may_fork), else in order on `thread`.
  template <class F>
  void for_each_action(int actions, int thread, bool may_fork, F&& body);
  void cfr(int node, int player, const float* opp_reach, const float* own_reach, float* out, int thread, bool may_fork);
  void evaluate(int node, int player, Mode mode, const double* opp_reach, double* out, int thread, bool may_fork);
  // The strategy a decision node plays this iteration into sigma: its lock, or regret matching
  // on its regrets (decoded on ws's float stack where compressed).
  void current_into(int node, float* sigma, Workspace& ws) const;
  // The average strategy at a decision node into sigma (the locked one where locked).
  template <class T>
  void average_into(int node, T* sigma) const;
  std::array<double, 2> values(Mode mode);
  std::array<std::vector<double>, 2> hand_values(Mode mode);

  std::shared_ptr<const HoldemEndgame> game_;
  HoldemAlgorithm algorithm_;
  int threads_;
  int iterations_ = 0;
  bool compressed_ = false;
  std::vector<float> regrets_, strategy_;         // float32 storage (empty where compressed)
  std::vector<int16_t> regret_codes_;             // 16-bit storage (empty unless compressed)
  std::vector<uint16_t> strategy_codes_;
  std::vector<float> regret_scale_, strategy_scale_;  // per node: value of one code
  float pos_ = 1, neg_ = 1, strat_ = 1;
  bool floor_regrets_ = false;
  bool fork_actions_ = false;  // threads over the root's actions (spots without a deal)
  std::vector<std::unique_ptr<Workspace>> workspaces_;
  std::array<std::vector<float>, 2> leaf_values_;  // leaves x hands(player), per player (depth-limited games)
  std::array<bool, 2> leaf_values_set_{};
  int next_half_ = 0;  // iterate_player: the player whose half comes next
  void check_leaf_values(int player) const;
  void half_iteration(int player);
  void reach_down(int node, bool average, std::array<std::vector<double>, 2>& reach,
                  std::array<std::vector<double>, 2>& out);
  std::vector<int32_t> lock_of_;               // per node: index into locks_, or -1
  std::vector<std::vector<float>> locks_;
  SpinPool* pool_ = nullptr;  // during iterate() and values() only
};

}  // namespace holdem
}  // namespace rebel
