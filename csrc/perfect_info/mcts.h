// Monte Carlo tree search for m,n,k games, AlphaZero style: PUCT selection with priors,
// Dirichlet noise on the root's priors in self-play, tree reuse between moves, and leaf
// evaluation either by a policy-value net (batched across many games: MctsBatch collects one
// leaf per game, the caller evaluates them all in one forward pass and hands the results
// back) or by random rollouts (the classic pure-MCTS yardstick).
//
// Values are in [-1, 1]. A node's value sum is from the point of view of the player who
// made the move leading to it, so a parent picks the child with the highest
// Q + c_puct * P * sqrt(N_parent) / (1 + N_child); an unvisited child's Q is 0.
#pragma once

#include <atomic>
#include <cstdint>
#include <random>
#include <vector>

#include "games/mnk_board.h"

namespace rebel {
namespace mnk {

struct MctsParams {
  int simulations = 400;            // new simulations per move searched
  double c_puct = 1.5;
  double dirichlet_alpha = 0.3;     // noise added to the root's priors when asked for
  double dirichlet_fraction = 0.25;
  bool reuse_tree = true;           // keep the chosen child's subtree for the next move

  void validate() const;  // std::invalid_argument naming the bad field
};

// Net input planes per position: the mover's stones, the opponent's stones, the last move,
// and a plane of ones when player 0 is to move. Row-major m x n each.
constexpr int kPlanes = 4;
void encode_planes(const Board& board, float* out);

// One game's search tree, rooted at its current position.
class SearchTree {
 public:
  SearchTree(const Rules& rules, const MctsParams& params);

  void reset(const Board& board);  // a new root (drops the tree)
  const Board& board() const { return root_board_; }
  // Plays `cell` at the root; with reuse_tree the child's subtree becomes the new tree.
  void advance(int cell);

  // Walks to a leaf by PUCT. A terminal leaf is backed up at once (returns false); otherwise
  // the leaf is left pending (its position in `leaf`) for evaluate() and true is returned.
  bool select(Board* leaf);
  // Expands the pending leaf with `priors` (length m * n, any non-negative weights; masked
  // to the legal cells and renormalised; uniform if they sum to 0) and backs up `value`
  // (for the player to move at the leaf).
  void evaluate(const float* priors, float value);
  bool pending() const { return pending_ >= 0; }

  // Mixes Dirichlet noise into the root's priors (an expanded root; no-op otherwise).
  void add_root_noise(std::mt19937_64* rng);
  bool root_expanded() const { return nodes_[0].expanded; }
  int root_visits() const { return nodes_[0].visits; }
  // Visit counts of the root's children per cell (length m * n; 0 for other cells).
  void root_visit_counts(int* out) const;
  // Mean value of the root for the player to move there (0 before any visit).
  double root_value() const;
  size_t num_nodes() const { return nodes_.size(); }

 private:
  struct Node {
    int parent = -1;
    int first_child = -1;
    int num_children = 0;
    int move = -1;
    int visits = 0;
    float prior = 0.0f;
    float raw_prior = 0.0f;  // before root noise
    float value_sum = 0.0f;  // for the player who moved into this node
    bool expanded = false;
  };

  void backup(int node, float value_for_mover_at_node);
  int best_child(int node) const;

  Rules rules_;
  MctsParams params_;
  Board root_board_;
  std::vector<Node> nodes_;
  int pending_ = -1;
  std::vector<int> legal_;
};

// Searches many games at once so that a net sees batches: each round selects one leaf per
// game that still has simulations to run (terminal leaves are backed up on the way), the
// caller evaluates the batch and returns priors and values for it.
class MctsBatch {
 public:
  MctsBatch(const Rules& rules, const MctsParams& params, int num_games, uint64_t seed);

  int num_games() const { return static_cast<int>(trees_.size()); }
  SearchTree& tree(int game) { return trees_.at(static_cast<size_t>(game)); }
  const SearchTree& tree(int game) const { return trees_.at(static_cast<size_t>(game)); }

  // Starts a move's search in the given games (`simulations` new ones each), with root
  // noise if asked. Games not listed do not search.
  void begin(const std::vector<int>& games, bool root_noise);
  // Selects the next leaves: fills `games_out` with the games that need an evaluation and
  // `planes_out` (resized to games_out.size() * kPlanes * m * n) with their positions.
  // Returns false once every started search has run its simulations.
  bool select(std::vector<int>* games_out, std::vector<float>* planes_out, const std::atomic<bool>* cancel = nullptr);
  // Evaluations of the games returned by the last select, in that order.
  void evaluate(const float* priors, const float* values);
  int awaiting() const { return static_cast<int>(selected_.size()); }

 private:
  Rules rules_;
  MctsParams params_;
  std::vector<SearchTree> trees_;
  std::vector<int> remaining_;
  std::vector<char> noise_pending_;  // root noise asked for, root not expanded yet
  std::vector<int> selected_;
  std::mt19937_64 rng_;
};

// Pure MCTS with random rollouts (uniform priors, c_puct 5): visit counts of the root's
// children after `playouts` simulations from `board` (length m * n).
std::vector<int> rollout_search(const Board& board, int playouts, uint64_t seed, double c_puct = 5.0,
                                const std::atomic<bool>* cancel = nullptr);

}  // namespace mnk
}  // namespace rebel
