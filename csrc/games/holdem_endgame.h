// Hold'em endgames on the real deck (or a short deck): a spot that starts on the flop, turn or
// river with a given board, one range per player and a betting tree, expanded over the turn
// and river cards into the tree the full-game solvers of solvers/holdem_cfr.h run on.
//
// Unlike the core's Game (core/game.h), each player keeps only the hands of its own range
// (167 and 250 on postflop-solver's example spot, not 1,326), with its own prior weights, and
// one index per hand throughout the tree: a hand that a dealt card blocks keeps its index and
// gets reach and value 0 below that card.
//
// The betting tree comes from Python (rebel/games/holdem_tree.py), without cards: decision,
// chance (the next street's card; one child), fold and showdown nodes, with each player's chips
// in the pot (half the starting pot each at the root). Values are zero-sum chips relative to
// the start of the spot: the winner of a pot gains what the loser put in, the starting pot's
// half included (postflop-solver's convention after its bias of pot / 2).
//
// Counterfactual values follow the usual convention: a player's value vector holds, for each
// of its hands, the sum over the opponent's hands of (opponent reach) x (chance probability)
// x (payoff), with card removal between the two hands. The chance probability of a dealt card
// is 1 / (deck cards not on the board and not in either hand), so a player's expected value is
// sum_h w(h) v(h) / (sum over compatible pairs of w0 w1): `pair_mass()`.
//
// Terminal values take time linear in the number of hands (showdown: after one sort of each
// player's hands per river board; card removal by per-card sums), with the dense pairwise
// computations kept as test oracles.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace rebel {
namespace holdem {

// The betting tree of a spot, in preorder (root = node 0), as rebel/games/holdem_tree.py
// builds it.
struct BettingTree {
  // kLeaf: a depth limit (a search's subgame): the next street's deal, not expanded; its values
  // come from outside the tree (HoldemSolver::set_leaf_values: a value net or exact solves).
  enum Kind : int8_t { kDecision = 0, kChance = 1, kFold = 2, kShowdown = 3, kLeaf = 4 };
  std::vector<int8_t> kind;
  std::vector<int8_t> player;        // decision: the actor; fold: the player who folded; else -1
  std::vector<int8_t> street;        // 0 flop, 1 turn, 2 river
  std::vector<int32_t> child_start;  // CSR: children of i are children[child_start[i] .. child_start[i + 1])
  std::vector<int32_t> children;
  std::vector<double> invested;      // 2 per node: each player's chips in the pot
  std::vector<std::string> labels;   // the action into each node ("check", "bet 120", ...)

  int num_nodes() const { return static_cast<int>(kind.size()); }
  int num_children(int node) const { return child_start[node + 1] - child_start[node]; }
  int child(int node, int i) const { return children[child_start[node] + i]; }
};

// A hand of one player: two cards.
struct HoleCards {
  int c1, c2;
};

struct EndgameSpec {
  std::vector<int> board;               // 3, 4 or 5 cards
  std::vector<int> deck;                // the cards of the deck: all 52, or a short deck
  std::array<std::vector<HoleCards>, 2> hands;
  std::array<std::vector<double>, 2> weights;  // >= 0, one per hand, some > 0 (zero: values asked, never reached)
  BettingTree tree;
  // Suit isomorphism: a dealt card whose suit the spot cannot tell from a lower suit (the two
  // suits hold the same ranks on the board so far, and swapping them maps the deck and both
  // weighted ranges onto themselves) is not expanded; its subtree is the lower suit's with the
  // two suits swapped, so its values are that child's with each hand read as its swapped hand.
  bool isomorphism = false;
};

// One node of the expanded tree (betting node x dealt cards).
struct EndgameNode {
  int8_t kind;          // BettingTree::Kind
  int8_t player;        // as in BettingTree
  int8_t dealt[2];      // cards dealt inside the spot on the way here (-1: none)
  int32_t action;       // the betting-tree node
  int32_t first_child;  // children are contiguous: first_child .. first_child + num_children - 1
  int32_t num_children;
  int32_t river_board;  // showdown: index of its five-card board in the showdown tables; else -1
  int32_t parent;       // -1 at the root
  int64_t storage;      // decision: offset (in values) of its num_children x hands(actor) block
};

// The tree's size, known before the solver allocates anything.
struct EndgameSize {
  int64_t decision_nodes = 0, chance_nodes = 0, terminal_nodes = 0;
  int64_t infosets = 0;            // (decision node, hand of its actor that no card blocks)
  int64_t storage_values = 0;      // sum over decision nodes of actions x hands(actor)
  int64_t river_boards = 0;
  int64_t isomorphic_deals = 0;    // chance outcomes not expanded: another child stands for them
  int64_t leaf_nodes = 0;          // depth-limit leaves (BettingTree::kLeaf)
  int64_t tree_bytes = 0;          // expanded nodes, showdown tables, hands
  int64_t solver_bytes(int bytes_per_value) const { return 2 * storage_values * bytes_per_value; }
};

class HoldemEndgame {
 public:
  // std::invalid_argument naming the problem for a malformed spec (cards, weights, tree).
  explicit HoldemEndgame(EndgameSpec spec);

  const EndgameSpec& spec() const { return spec_; }
  const BettingTree& betting() const { return spec_.tree; }
  int num_hands(int player) const { return static_cast<int>(spec_.hands[player].size()); }
  const std::vector<HoleCards>& hands(int player) const { return spec_.hands[player]; }
  const std::vector<double>& weights(int player) const { return spec_.weights[player]; }
  const std::vector<EndgameNode>& nodes() const { return nodes_; }
  const EndgameNode& node(int i) const { return nodes_[i]; }
  const EndgameSize& size() const { return size_; }
  // sum over pairs of hands that share no card of w0(h0) w1(h1).
  double pair_mass() const { return pair_mass_; }
  // The number of cards a chance node deals from: deck cards not on its board, less four
  // (the two hands); its children each have probability 1 / chance_divisor.
  int chance_divisor(int node) const;
  // Hands of `player` holding `card`.
  const std::vector<int32_t>& hands_with_card(int player, int card) const { return hands_with_card_[player][card]; }
  // The index of the same two cards among the opponent's hands, or -1.
  const std::vector<int32_t>& same_hand(int player) const { return same_hand_[player]; }
  // The board at a node: the spot's board and the cards dealt on the way.
  std::vector<int> board_at(int node) const;
  // Chips each player has put in at a terminal (or any) node.
  double invested(int node, int player) const { return spec_.tree.invested[2 * nodes_[node].action + player]; }

  // Values at a terminal node for `player` against the opponent's reach (length
  // num_hands(1 - player), zero on hands the node's board blocks); out has num_hands(player)
  // entries, zero on the player's blocked hands. scratch: scratch_size() doubles.
  void terminal_values(int node, int player, const float* opp_reach, float* out, double* scratch) const;
  void terminal_values(int node, int player, const double* opp_reach, double* out, double* scratch) const;
  size_t scratch_size() const { return 3 * static_cast<size_t>(std::max(num_hands(0), num_hands(1))) + 16; }
  // The same by the dense pairwise sum over both players' hands (the test oracle).
  void terminal_values_dense(int node, int player, const double* opp_reach, double* out) const;

  // The player's equity at a node against the opponent's reach there (zero on hands the node's
  // board blocks): for each of its hands, the share of the pot it wins at showdown (ties half)
  // averaged over the opponent's hands and every run-out of the cards still to come; NaN where
  // no opponent hand with reach is compatible.
  std::vector<double> equity(int node, int player, const double* opp_reach) const;
  // For each of the player's hands, the opponent's reach on the hands compatible with it.
  std::vector<double> compatible_mass(int player, const double* opp_reach) const;
  // Nodes from the root to `node`, both included.
  std::vector<int> path_to(int node) const;
  // The depth-limit leaves (BettingTree::kLeaf) in node order, and each node's place among them
  // (-1: not a leaf).
  const std::vector<int32_t>& leaves() const { return leaves_; }
  int leaf_index(int node) const { return leaf_of_[node]; }
  // Bit mask of the cards on the board at a node.
  uint64_t board_mask_at(int node) const;

  // Suit isomorphism (EndgameSpec::isomorphism). For a chance node's child: bit s is set when the
  // card of the same rank in suit s was dealt as this child, with suits swapped (0 when off).
  uint8_t isomorphic_suits(int node) const { return iso_suits_.empty() ? 0 : iso_suits_[node]; }
  // The player's hands with suits a and b swapped: index of the swapped hand for each hand
  // (defined only for a pair the spot cannot tell apart, i.e. one that isomorphic_suits uses).
  const std::vector<int32_t>& swapped_hands(int player, int suit_a, int suit_b) const {
    return swapped_hands_[player][suit_pair(suit_a, suit_b)];
  }
  static int suit_pair(int a, int b) {  // 0..5 for a != b, either order
    static constexpr int8_t kPair[4][4] = {{-1, 0, 1, 2}, {0, -1, 3, 4}, {1, 3, -1, 5}, {2, 4, 5, -1}};
    return kPair[a][b];
  }

 private:
  struct RiverTable {  // one player's unblocked hands on one river board, weakest first
    std::vector<int32_t> strength, hand;
    std::vector<uint8_t> c1, c2;  // the hands' cards, in the same order (no indirection in the sweeps)
  };
  // Fills nodes_[slot] with betting node `action` under the cards of `mask`, then its subtree.
  void build(int slot, int parent, int action, uint64_t mask, int8_t dealt0, int8_t dealt1);
  int river_index(uint64_t board_mask);
  int valid_hands(int player, int8_t dealt0, int8_t dealt1) const;
  template <class T>
  void terminal_impl(int node, int player, const T* opp_reach, T* out, double* scratch) const;

  EndgameSpec spec_;
  uint64_t board_mask_ = 0, deck_mask_ = 0;
  std::vector<EndgameNode> nodes_;
  EndgameSize size_;
  double pair_mass_ = 0;
  std::array<std::vector<uint64_t>, 2> hand_mask_;
  std::array<std::array<std::vector<int32_t>, 64>, 2> hands_with_card_;
  std::array<std::vector<int32_t>, 2> same_hand_;
  std::array<std::vector<int32_t>, 2> spread_order_;  // hands ordered so neighbours share no card
  // Which suit pairs swap the deck and both weighted ranges onto themselves (isomorphism only).
  void find_symmetric_suits();
  std::array<bool, 6> symmetric_pair_{};
  std::array<std::array<std::vector<int32_t>, 6>, 2> swapped_hands_;
  std::vector<uint8_t> iso_suits_;  // per node (isomorphism only)
  std::vector<int32_t> leaves_, leaf_of_;
  std::vector<std::array<RiverTable, 2>> river_tables_;
  std::unordered_map<uint64_t, int32_t> river_of_mask_;
};

}  // namespace holdem
}  // namespace rebel
