// Exact mode-(b) evaluation of test-time search on perfect-information games.
//
// In a game with one hand per player every belief is the point mass on that hand, so the
// search at a public state depends on the state alone: its subgame, its root beliefs and
// the solver's whole trajectory are the same whichever history reached the state. Mode (b)
// stops each search at an independently drawn iteration i (even i < T, weight i/2 + 1),
// and the mixture of N such policies (reach-weighted, as evaluate_sampled averages them)
// converges as N grows to a fixed behavioural policy: at every node of a search's
// subgame, the draw-weighted average of the iterates, each weighted by the acting
// player's own reach from the subgame's root under that iterate (the reaches from the
// game's root to the search root come from other, independent draws and cancel).
//
// This computes that limit exactly (no sampling error) by solving each distinct search
// state once. On tic-tac-toe with depth 2 that is 2,423 searches, where every sampled
// policy of TestTimeSearch needs 180,361 (one per history). States are told apart by the game's public
// features, so the game must say that they identify the state
// (Game::features_identify_state).
#pragma once

#include <array>
#include <atomic>
#include <vector>

#include "search/test_time_search.h"

namespace rebel {

struct PerfectInfoEvaluation {
  std::vector<double> policy;       // the limit policy on the full tree (child-indexed, one hand)
  double exploitability = 0.0;
  std::array<double, 2> br_values{};
};

// Throws std::invalid_argument if `game` is not a perfect-information game whose public
// features identify the state.
void check_perfect_information(const Game& game);

class PerfectInfoSearch {
 public:
  // Builds the full tree and finds the distinct states where a search starts (every
  // `depth`-th level, as TestTimeSearch). Throws std::invalid_argument for a game that is
  // not perfect-information or too large for its full tree.
  PerfectInfoSearch(GamePtr game, SearchParams params, ValueNetPtr net);

  const Game& game() const { return *game_; }
  const PublicTree& full_tree() const { return *full_tree_; }
  std::shared_ptr<const PublicTree> full_tree_ptr() const { return full_tree_; }
  const SearchParams& params() const { return params_; }
  int num_states() const { return static_cast<int>(state_history_.size()); }
  int num_search_roots() const { return static_cast<int>(roots_.size()); }

  // The N -> infinity limit of evaluate_sampled (mode (b)), computed exactly: each distinct
  // state is solved once, on `threads` threads; the result does not depend on `threads`.
  // `progress` counts the states solved (of num_states()).
  PerfectInfoEvaluation evaluate(int threads = 1, const CancelFlag* cancel = nullptr,
                                 std::atomic<long>* progress = nullptr) const;

 private:
  GamePtr game_;
  SearchParams params_;
  ValueNetPtr net_;
  std::shared_ptr<const PublicTree> full_tree_;
  std::vector<const History*> state_history_;  // a history of each distinct search state
  std::vector<std::pair<int, int>> roots_;     // (full-tree node, state) of every search root
};

}  // namespace rebel
