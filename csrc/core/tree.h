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

// kChance: a public chance node (player kChancePlayer); its children are the outcomes.
enum class NodeKind : uint8_t { kDecision = 0, kTerminal = 1, kPseudoLeaf = 2, kChance = 3 };

struct PublicTree {
  std::vector<int> parent;        // -1 for the root
  std::vector<int> first_child;   // valid when num_children > 0
  std::vector<int> num_children;  // 0 for terminals and pseudo-leaves
  std::vector<Action> action;     // action leading to the node (-1 for the root)
  std::vector<int> depth;         // actions below the root
  std::vector<int> player;        // player to act (kChancePlayer at chance nodes); -1 at terminals
  std::vector<NodeKind> kind;
  std::vector<History> history;   // full public history (from the game's start)
  std::string game;               // Game::description() of the game it was built for
  int num_hands = 0;              // the game's hands per player

  std::vector<int> decision_nodes;  // nodes where a player acts, in breadth-first order
  std::vector<int> chance_nodes;    // public chance nodes, in breadth-first order
  std::vector<int> internal_nodes;  // decision and chance nodes, in breadth-first order
  std::vector<int> terminal_nodes;
  std::vector<int> pseudo_leaves;
  // Chance factors f_b(h) (game.h) of the children of every chance node n: the H values of
  // its k-th child start at chance_factors[chance_offset[n] + k * H]; chance_offset[n] = -1 at
  // every other node. Empty for games without public chance.
  std::vector<long long> chance_offset;
  std::vector<double> chance_factors;

  int size() const { return static_cast<int>(parent.size()); }
  const History& root_history() const { return history[0]; }
  bool has_chance() const { return !chance_nodes.empty(); }
  // The factors of node n's first child (the children's are contiguous, H each), or null
  // when n is not a chance node.
  const double* chance_factors_at(int n) const {
    return chance_offset.empty() || chance_offset[n] < 0 ? nullptr : chance_factors.data() + chance_offset[n];
  }
};

// Where a depth-limited subgame of a game with public chance (a poker round) ends.
enum class ChanceLeaves {
  kNone,       // a deal is an event like any other (the depth limit alone cuts the tree)
  kAfterDeal,  // every non-terminal outcome of a chance node below the root is a pseudo-leaf,
               // and a chance node at max_depth is expanded, so no leaf lies before a deal:
               // the value net is asked at each dealt card, where the next searches start
  kAtDeal,     // every chance node below the root is a pseudo-leaf (the PBS before the deal;
               // the next search starts there and deals the card itself)
};

// "none", "after_deal", "at_deal"; std::invalid_argument naming the choices otherwise.
ChanceLeaves parse_chance_leaves(const std::string& name);
std::string chance_leaves_name(ChanceLeaves chance_leaves);

// Builds the tree below `root` down to `max_depth` public events (max_depth < 0: the whole
// subtree). Non-terminal nodes at max_depth become pseudo-leaves, and so do the deals or their
// outcomes as `chance_leaves` says. A chance node at the root is always expanded. Throws
// std::invalid_argument (before allocating) if the tree would not fit in memory.
PublicTree build_tree(const Game& game, const History& root, int max_depth = -1,
                      ChanceLeaves chance_leaves = ChanceLeaves::kNone);

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
