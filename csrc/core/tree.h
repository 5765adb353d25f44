// Public tree in flat arrays (breadth-first order: parents before children, the children
// of a node contiguous). Only legal actions are stored.
//
// Policies over a tree are flat arrays of size num_nodes * num_hands indexed by the
// *child* node: policy[c * H + h] is the probability that the player acting at
// parent(c), holding hand h, takes the action leading to c. Entries of the root are unused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/game.h"

namespace rebel {

enum class NodeKind : uint8_t { kDecision = 0, kTerminal = 1, kPseudoLeaf = 2 };

struct PublicTree {
  std::vector<int> parent;        // -1 for the root
  std::vector<int> first_child;   // valid when num_children > 0
  std::vector<int> num_children;  // 0 for terminals and pseudo-leaves
  std::vector<Action> action;     // action leading to the node (-1 for the root)
  std::vector<int> depth;         // actions below the root
  std::vector<int> player;        // player to act; -1 at terminals
  std::vector<NodeKind> kind;
  std::vector<History> history;   // full public history (from the game's start)
  std::string game;               // Game::description() of the game it was built for

  std::vector<int> decision_nodes;  // in breadth-first order
  std::vector<int> terminal_nodes;
  std::vector<int> pseudo_leaves;

  int size() const { return static_cast<int>(parent.size()); }
  const History& root_history() const { return history[0]; }
};

// Builds the tree below `root` down to `max_depth` actions (max_depth < 0: the whole
// subtree). Non-terminal nodes at max_depth become pseudo-leaves. Throws
// std::invalid_argument (before allocating) if the tree would not fit in memory.
PublicTree build_tree(const Game& game, const History& root, int max_depth = -1);

// Throws std::invalid_argument unless `tree` was built for `game` (same description): a
// tree of another game would index hands and actions out of range.
void check_tree_game(const Game& game, const PublicTree& tree);

// Largest tree (in nodes * hands) we agree to allocate; estimated from physical memory.
double max_tree_cells();

// Uniform policy over legal actions.
std::vector<double> uniform_policy(const Game& game, const PublicTree& tree);

// Finds the node with the given history (relative to the tree's root); -1 if absent.
int find_node(const PublicTree& tree, const History& history);

}  // namespace rebel
