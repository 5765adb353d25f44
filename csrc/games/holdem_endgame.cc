#include "games/holdem_endgame.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "games/hand_rank.h"
#include "games/holdem_cards.h"

namespace rebel {
namespace holdem {

namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

uint64_t bit(int card) { return uint64_t{1} << card; }

std::string node_name(int node) { return "betting-tree node " + std::to_string(node); }

void check_tree(const BettingTree& t) {
  const int n = t.num_nodes();
  if (n == 0) fail("the betting tree has no nodes");
  const size_t un = static_cast<size_t>(n);
  if (t.player.size() != un || t.street.size() != un || t.child_start.size() != un + 1 || t.invested.size() != 2 * un) {
    fail("the betting tree's arrays disagree in length (kind " + std::to_string(n) + ", player " +
         std::to_string(t.player.size()) + ", street " + std::to_string(t.street.size()) + ", child_start " +
         std::to_string(t.child_start.size()) + ", invested " + std::to_string(t.invested.size()) + ")");
  }
  if (!t.labels.empty() && t.labels.size() != un) fail("the betting tree has " + std::to_string(t.labels.size()) + " labels for " + std::to_string(n) + " nodes");
  if (t.child_start[0] != 0 || t.child_start[un] != static_cast<int32_t>(t.children.size())) {
    fail("the betting tree's child_start must run from 0 to the number of children");
  }
  std::vector<int> parents(un, 0);
  for (int i = 0; i < n; ++i) {
    const int k = t.child_start[i + 1] - t.child_start[i];
    if (k < 0) fail("the betting tree's child_start decreases at " + node_name(i));
    const int kind = t.kind[i];
    if (kind == BettingTree::kDecision) {
      if (k < 1) fail(node_name(i) + " is a decision without actions");
      if (t.player[i] != 0 && t.player[i] != 1) fail(node_name(i) + " is a decision of player " + std::to_string(t.player[i]) + " (0 or 1)");
    } else if (kind == BettingTree::kChance) {
      if (k != 1) fail(node_name(i) + " is a chance node with " + std::to_string(k) + " children (one: the next street)");
    } else if (kind == BettingTree::kFold || kind == BettingTree::kShowdown) {
      if (k != 0) fail(node_name(i) + " is terminal but has children");
      if (kind == BettingTree::kFold && t.player[i] != 0 && t.player[i] != 1) fail(node_name(i) + " is a fold of player " + std::to_string(t.player[i]));
      if (kind == BettingTree::kShowdown && std::fabs(t.invested[2 * i] - t.invested[2 * i + 1]) > 1e-9) {
        fail(node_name(i) + " is a showdown with unequal chips in the pot");
      }
    } else if (kind == BettingTree::kLeaf) {
      if (k != 0) fail(node_name(i) + " is a leaf but has children");
      if (std::fabs(t.invested[2 * i] - t.invested[2 * i + 1]) > 1e-9) fail(node_name(i) + " is a leaf with unequal chips in the pot");
    } else {
      fail(node_name(i) + " has kind " + std::to_string(kind) + " (0 decision, 1 chance, 2 fold, 3 showdown, 4 leaf)");
    }
    for (int p = 0; p < 2; ++p) {
      const double v = t.invested[2 * i + p];
      if (!std::isfinite(v) || v < 0) fail(node_name(i) + ": player " + std::to_string(p) + " has " + std::to_string(v) + " chips in the pot");
    }
    for (int c = t.child_start[i]; c < t.child_start[i + 1]; ++c) {
      const int child = t.children[c];
      if (child <= i || child >= n) fail(node_name(i) + " has child " + std::to_string(child) + " (children come after their parent, in preorder)");
      ++parents[child];
    }
  }
  for (int i = 1; i < n; ++i) {
    if (parents[i] != 1) fail(node_name(i) + " has " + std::to_string(parents[i]) + " parents (a tree has one)");
  }
}

}  // namespace

HoldemEndgame::HoldemEndgame(EndgameSpec spec) : spec_(std::move(spec)) {
  // The deck and the board.
  if (spec_.deck.empty()) fail("the deck is empty");
  check_cards(spec_.deck.data(), static_cast<int>(spec_.deck.size()));
  for (int c : spec_.deck) deck_mask_ |= bit(c);
  const int board_size = static_cast<int>(spec_.board.size());
  if (board_size < 3 || board_size > 5) fail("the board has " + std::to_string(board_size) + " cards (3 on the flop, 4 on the turn, 5 on the river)");
  check_cards(spec_.board.data(), board_size);
  for (int c : spec_.board) {
    if (!(deck_mask_ & bit(c))) fail("board card " + card_name(c) + " is not in the deck");
    board_mask_ |= bit(c);
  }
  check_tree(spec_.tree);

  // The hands.
  for (int p = 0; p < 2; ++p) {
    const auto& hands = spec_.hands[p];
    const auto& w = spec_.weights[p];
    const std::string who = p == 0 ? "OOP" : "IP";
    if (hands.empty()) fail("the " + who + " range is empty");
    if (w.size() != hands.size()) fail("the " + who + " range has " + std::to_string(hands.size()) + " hands and " + std::to_string(w.size()) + " weights");
    std::vector<int> seen(52 * 52, 0);
    hand_mask_[p].resize(hands.size());
    for (size_t h = 0; h < hands.size(); ++h) {
      const int cards[2] = {hands[h].c1, hands[h].c2};
      check_cards(cards, 2);
      for (int c : cards) {
        if (!(deck_mask_ & bit(c))) fail("the " + who + " hand " + cards_name({cards[0], cards[1]}) + " holds " + card_name(c) + ", not in the deck");
        if (board_mask_ & bit(c)) fail("the " + who + " hand " + cards_name({cards[0], cards[1]}) + " holds board card " + card_name(c));
      }
      const int lo = std::min(cards[0], cards[1]), hi = std::max(cards[0], cards[1]);
      if (seen[lo * 52 + hi]++) fail("the " + who + " range lists " + cards_name({cards[0], cards[1]}) + " twice");
      // Zero is allowed: a belief state may give a hand no weight and still ask for its values.
      if (!(w[h] >= 0) || !std::isfinite(w[h])) fail("the " + who + " hand " + cards_name({cards[0], cards[1]}) + " has weight " + std::to_string(w[h]) + " (weights are finite and not negative)");
      hand_mask_[p][h] = bit(cards[0]) | bit(cards[1]);
      hands_with_card_[p][cards[0]].push_back(static_cast<int32_t>(h));
      hands_with_card_[p][cards[1]].push_back(static_cast<int32_t>(h));
    }
    if (!std::any_of(w.begin(), w.end(), [](double x) { return x > 0; })) fail("the " + who + " range has no hand with a positive weight");
  }
  for (int p = 0; p < 2; ++p) {
    std::vector<int32_t> index(52 * 52, -1);
    for (size_t h = 0; h < spec_.hands[1 - p].size(); ++h) {
      const auto& c = spec_.hands[1 - p][h];
      index[std::min(c.c1, c.c2) * 52 + std::max(c.c1, c.c2)] = static_cast<int32_t>(h);
    }
    same_hand_[p].resize(spec_.hands[p].size());
    for (size_t h = 0; h < spec_.hands[p].size(); ++h) {
      const auto& c = spec_.hands[p][h];
      same_hand_[p][h] = index[std::min(c.c1, c.c2) * 52 + std::max(c.c1, c.c2)];
    }
  }
  // An order of each player's hands in which a hand shares no card with the two before it where
  // possible (greedy): the fold sums add each hand into its cards' sums, and in the natural
  // order (one first card for up to 51 hands in a row) each addition would wait for the last.
  for (int p = 0; p < 2; ++p) {
    std::vector<int32_t> left(spec_.hands[p].size());
    for (size_t h = 0; h < left.size(); ++h) left[h] = static_cast<int32_t>(h);
    uint64_t before = 0, before2 = 0;
    while (!left.empty()) {
      size_t pick = 0;
      for (size_t k = 0; k < left.size() && k < 64; ++k) {
        const uint64_t m = hand_mask_[p][left[k]];
        if (!(m & before) && !(m & before2)) {
          pick = k;
          break;
        }
      }
      spread_order_[p].push_back(left[pick]);
      before2 = before;
      before = hand_mask_[p][left[pick]];
      left.erase(left.begin() + static_cast<std::ptrdiff_t>(pick));
    }
  }
  // Pairs sharing no card: all pairs, less those sharing a card (each counted once per shared
  // card), plus the identical pairs (counted twice above).
  double w0 = 0, w1 = 0, shared = 0, same = 0;
  double per_card[2][52] = {};
  for (int p = 0; p < 2; ++p) {
    for (size_t h = 0; h < spec_.hands[p].size(); ++h) {
      per_card[p][spec_.hands[p][h].c1] += spec_.weights[p][h];
      per_card[p][spec_.hands[p][h].c2] += spec_.weights[p][h];
      (p == 0 ? w0 : w1) += spec_.weights[p][h];
    }
  }
  for (int c = 0; c < 52; ++c) shared += per_card[0][c] * per_card[1][c];
  for (size_t h = 0; h < spec_.hands[0].size(); ++h) {
    if (same_hand_[0][h] >= 0) same += spec_.weights[0][h] * spec_.weights[1][same_hand_[0][h]];
  }
  pair_mass_ = w0 * w1 - shared + same;
  if (!(pair_mass_ > 0)) fail("the two ranges share no pair of hands without a common card");

  // Expand the betting tree over the dealt cards.
  nodes_.resize(1);
  const int root_street = board_size - 3;
  if (spec_.tree.street[0] != root_street) {
    fail("the betting tree starts on street " + std::to_string(spec_.tree.street[0]) + " but a board of " +
         std::to_string(board_size) + " cards is street " + std::to_string(root_street));
  }
  if (spec_.isomorphism) find_symmetric_suits();
  build(0, -1, 0, board_mask_, -1, -1);
  if (spec_.isomorphism) iso_suits_.resize(nodes_.size(), 0);
  leaf_of_.assign(nodes_.size(), -1);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].kind != BettingTree::kLeaf) continue;
    leaf_of_[i] = static_cast<int32_t>(leaves_.size());
    leaves_.push_back(static_cast<int32_t>(i));
  }
  size_.tree_bytes += static_cast<int64_t>((leaves_.size() + leaf_of_.size()) * sizeof(int32_t));
  for (const auto& rt : river_tables_) {
    for (const auto& t : rt) size_.tree_bytes += static_cast<int64_t>(t.hand.size() * (2 * sizeof(int32_t) + 2));
  }
  size_.tree_bytes += static_cast<int64_t>(nodes_.size() * sizeof(EndgameNode) + iso_suits_.size());
  for (const auto& per_player : swapped_hands_) {
    for (const auto& v : per_player) size_.tree_bytes += static_cast<int64_t>(v.size() * sizeof(int32_t));
  }
  size_.river_boards = static_cast<int64_t>(river_tables_.size());
}

void HoldemEndgame::find_symmetric_suits() {
  auto swap_card = [](int c, int a, int b) {
    const int s = card_suit(c);
    return make_card(card_rank(c), s == a ? b : s == b ? a : s);
  };
  for (int a = 0; a < 4; ++a) {
    for (int b = a + 1; b < 4; ++b) {
      const int pair = suit_pair(a, b);
      bool symmetric = true;
      for (int c : spec_.deck) symmetric = symmetric && (deck_mask_ & bit(swap_card(c, a, b)));
      for (int p = 0; p < 2 && symmetric; ++p) {
        std::vector<int32_t> index(52 * 52, -1);
        const auto& hands = spec_.hands[p];
        for (size_t h = 0; h < hands.size(); ++h) index[hands[h].c1 * 52 + hands[h].c2] = index[hands[h].c2 * 52 + hands[h].c1] = static_cast<int32_t>(h);
        std::vector<int32_t> swapped(hands.size());
        for (size_t h = 0; h < hands.size() && symmetric; ++h) {
          const int32_t j = index[swap_card(hands[h].c1, a, b) * 52 + swap_card(hands[h].c2, a, b)];
          // Weights come from the same range text for both suits, so they are equal exactly.
          symmetric = j >= 0 && spec_.weights[p][j] == spec_.weights[p][h];
          swapped[h] = j;
        }
        swapped_hands_[p][pair] = std::move(swapped);
      }
      symmetric_pair_[pair] = symmetric;
      if (!symmetric) {
        swapped_hands_[0][pair].clear();
        swapped_hands_[1][pair].clear();
      }
    }
  }
}

int HoldemEndgame::valid_hands(int player, int8_t dealt0, int8_t dealt1) const {
  int n = num_hands(player);
  if (dealt0 >= 0) n -= static_cast<int>(hands_with_card_[player][dealt0].size());
  if (dealt1 >= 0) {
    n -= static_cast<int>(hands_with_card_[player][dealt1].size());
    for (int32_t h : hands_with_card_[player][dealt1]) n += (hand_mask_[player][h] & bit(dealt0)) ? 1 : 0;
  }
  return n;
}

void HoldemEndgame::build(int slot, int parent, int action, uint64_t mask, int8_t dealt0, int8_t dealt1) {
  const BettingTree& t = spec_.tree;
  EndgameNode node{};
  node.kind = t.kind[action];
  node.player = t.player[action];
  node.dealt[0] = dealt0;
  node.dealt[1] = dealt1;
  node.action = action;
  node.river_board = -1;
  node.storage = -1;
  node.first_child = -1;
  node.num_children = 0;
  node.parent = parent;
  const int cards_on_board = static_cast<int>(spec_.board.size()) + (dealt0 >= 0) + (dealt1 >= 0);
  if (node.kind == BettingTree::kDecision) {
    const int k = t.num_children(action);
    node.storage = size_.storage_values;
    size_.storage_values += static_cast<int64_t>(k) * num_hands(node.player);
    size_.infosets += valid_hands(node.player, dealt0, dealt1);
    ++size_.decision_nodes;
    node.num_children = k;
    node.first_child = static_cast<int32_t>(nodes_.size());
    nodes_[slot] = node;
    nodes_.resize(nodes_.size() + k);
    for (int i = 0; i < k; ++i) build(node.first_child + i, slot, t.child(action, i), mask, dealt0, dealt1);
  } else if (node.kind == BettingTree::kChance) {
    if (cards_on_board >= 5) fail(node_name(action) + " deals a card after the river");
    // With isomorphism, each suit's stand-in: the lowest suit the spot cannot tell from it here.
    int stand_in[4] = {0, 1, 2, 3};
    if (spec_.isomorphism) {
      uint64_t ranks_of[4] = {};
      for (int c = 0; c < 52; ++c) {
        if (mask & bit(c)) ranks_of[card_suit(c)] |= uint64_t{1} << card_rank(c);
      }
      for (int s = 1; s < 4; ++s) {
        for (int a = 0; a < s; ++a) {
          if (symmetric_pair_[suit_pair(a, s)] && ranks_of[a] == ranks_of[s]) {
            stand_in[s] = a;
            break;
          }
        }
      }
    }
    std::vector<int> cards;
    uint8_t iso[52] = {};
    for (int c : spec_.deck) {
      if (mask & bit(c)) continue;
      const int s = stand_in[card_suit(c)];
      if (s == card_suit(c)) {
        cards.push_back(c);
      } else {
        iso[make_card(card_rank(c), s)] |= static_cast<uint8_t>(1u << card_suit(c));
        ++size_.isomorphic_deals;
      }
    }
    ++size_.chance_nodes;
    node.num_children = static_cast<int>(cards.size());
    node.first_child = static_cast<int32_t>(nodes_.size());
    nodes_[slot] = node;
    nodes_.resize(nodes_.size() + cards.size());
    if (spec_.isomorphism) {
      iso_suits_.resize(nodes_.size(), 0);
      for (size_t i = 0; i < cards.size(); ++i) iso_suits_[node.first_child + i] = iso[cards[i]];
    }
    const int child = t.child(action, 0);
    for (size_t i = 0; i < cards.size(); ++i) {
      const int8_t c = static_cast<int8_t>(cards[i]);
      build(node.first_child + static_cast<int>(i), slot, child, mask | bit(c), dealt0 >= 0 ? dealt0 : c, dealt0 >= 0 ? c : int8_t{-1});
    }
  } else if (node.kind == BettingTree::kLeaf) {
    if (cards_on_board >= 5) fail(node_name(action) + " is a leaf on the river: a leaf stands for the next street's deal");
    ++size_.leaf_nodes;
    nodes_[slot] = node;
  } else {
    ++size_.terminal_nodes;
    if (node.kind == BettingTree::kShowdown) {
      if (cards_on_board != 5) fail(node_name(action) + " is a showdown before the river (a run-out needs a chance node per street)");
      node.river_board = river_index(mask);
    }
    nodes_[slot] = node;
  }
}

int HoldemEndgame::river_index(uint64_t mask) {
  const auto found = river_of_mask_.find(mask);
  if (found != river_of_mask_.end()) return found->second;
  int board[5], n = 0;
  for (int c = 0; c < 52; ++c) {
    if (mask & bit(c)) board[n++] = c;
  }
  std::array<RiverTable, 2> tables;
  for (int p = 0; p < 2; ++p) {
    std::vector<std::pair<int32_t, int32_t>> ranked;
    for (size_t h = 0; h < spec_.hands[p].size(); ++h) {
      if (hand_mask_[p][h] & mask) continue;
      const int cards[7] = {board[0], board[1], board[2], board[3], board[4], spec_.hands[p][h].c1, spec_.hands[p][h].c2};
      ranked.emplace_back(hand_rank(cards, 7), static_cast<int32_t>(h));
    }
    std::sort(ranked.begin(), ranked.end());
    // Within each group of equal strength (any order is correct there), put hands that share a
    // card apart: the sweeps add each hand into its two cards' sums, and a card summed twice in
    // a row makes the second addition wait for the first.
    for (size_t begin = 0; begin < ranked.size();) {
      size_t end = begin;
      while (end < ranked.size() && ranked[end].first == ranked[begin].first) ++end;
      for (size_t i = begin; i < end; ++i) {
        const uint64_t before = i > begin ? hand_mask_[p][ranked[i - 1].second] : 0;
        const uint64_t before2 = i > begin + 1 ? hand_mask_[p][ranked[i - 2].second] : 0;
        for (size_t k = i; k < end; ++k) {
          const uint64_t m = hand_mask_[p][ranked[k].second];
          if (!(m & before) && !(m & before2)) {
            std::swap(ranked[i], ranked[k]);
            break;
          }
        }
      }
      begin = end;
    }
    for (const auto& [s, h] : ranked) {
      tables[p].strength.push_back(s);
      tables[p].hand.push_back(h);
      tables[p].c1.push_back(static_cast<uint8_t>(spec_.hands[p][h].c1));
      tables[p].c2.push_back(static_cast<uint8_t>(spec_.hands[p][h].c2));
    }
  }
  const int index = static_cast<int>(river_tables_.size());
  river_tables_.push_back(std::move(tables));
  river_of_mask_.emplace(mask, index);
  return index;
}

int HoldemEndgame::chance_divisor(int node) const {
  const EndgameNode& n = nodes_[node];
  const int on_board = static_cast<int>(spec_.board.size()) + (n.dealt[0] >= 0) + (n.dealt[1] >= 0);
  return static_cast<int>(spec_.deck.size()) - on_board - 4;
}

std::vector<int> HoldemEndgame::board_at(int node) const {
  std::vector<int> board = spec_.board;
  for (int8_t c : nodes_[node].dealt) {
    if (c >= 0) board.push_back(c);
  }
  return board;
}

template <class T>
void HoldemEndgame::terminal_impl(int node, int player, const T* opp_reach, T* out, double* scratch) const {
  const EndgameNode& n = nodes_[node];
  const int opp = 1 - player;
  const auto& own_hands = spec_.hands[player];
  const auto& opp_hands = spec_.hands[opp];
  const int own_count = num_hands(player);
  double card_sum[52] = {};
  if (n.kind == BettingTree::kFold) {
    // Every opponent hand sharing no card with ours: the total, less the hands holding either
    // of our cards, plus our exact hand (subtracted once for each card).
    const int folder = n.player;
    const double amount = (folder == player ? -1.0 : 1.0) * invested(node, folder);
    double total = 0;
    for (int32_t j : spread_order_[opp]) {
      const double r = opp_reach[j];
      total += r;
      card_sum[opp_hands[j].c1] += r;
      card_sum[opp_hands[j].c2] += r;
    }
    const auto& same = same_hand_[player];
    for (int h = 0; h < own_count; ++h) {
      const double v = total - card_sum[own_hands[h].c1] - card_sum[own_hands[h].c2] + (same[h] >= 0 ? static_cast<double>(opp_reach[same[h]]) : 0.0);
      out[h] = static_cast<T>(amount * v);
    }
    for (int8_t c : n.dealt) {
      if (c < 0) continue;
      for (int32_t h : hands_with_card_[player][c]) out[h] = 0;
    }
    return;
  }
  // Showdown: sweep our hands from weakest to strongest, adding the opponent's strictly weaker
  // hands (wins), then from strongest to weakest with its strictly stronger ones (losses).
  // Hands of equal strength split the pot: neither. A hand sharing both our cards has our
  // strength, so it never enters either sum and needs no correction.
  const double amount = invested(node, player);
  const RiverTable& own = river_tables_[n.river_board][player];
  const RiverTable& other = river_tables_[n.river_board][opp];
  const size_t own_n = own.hand.size(), opp_n = other.hand.size();
  const int32_t* own_strength = own.strength.data();
  std::fill(out, out + own_count, T(0));
  // The opponent's hands with reach, in strength order (deep lines of a converged strategy reach
  // few hands: the sweeps then run over those alone). Compaction without branches: every hand is
  // written, the count advances only past hands with reach.
  double* reach = scratch;
  double* win = scratch + opp_n;
  int32_t* strength = reinterpret_cast<int32_t*>(scratch + opp_n + own_n);
  uint8_t* c1 = reinterpret_cast<uint8_t*>(strength + opp_n + 1);
  uint8_t* c2 = c1 + opp_n + 1;
  // Raw pointers: the byte stores below may alias anything, vectors' data pointers included, so
  // reading through the vectors would reload those pointers on every hand.
  const int32_t* other_hand = other.hand.data();
  const int32_t* other_strength = other.strength.data();
  const uint8_t* other_c1 = other.c1.data();
  const uint8_t* other_c2 = other.c2.data();
  const uint8_t* own_c1 = own.c1.data();
  const uint8_t* own_c2 = own.c2.data();
  const int32_t* own_hand = own.hand.data();
  size_t live = 0;
  for (size_t j = 0; j < opp_n; ++j) {
    const double r = opp_reach[other_hand[j]];
    reach[live] = r;
    strength[live] = other_strength[j];
    c1[live] = other_c1[j];
    c2[live] = other_c2[j];
    live += r != 0 ? 1 : 0;
  }
  if (live == 0) return;
  double total = 0;
  size_t j = 0;
  for (size_t i = 0; i < own_n; ++i) {
    const int32_t s = own_strength[i];
    for (; j < live && strength[j] < s; ++j) {
      total += reach[j];
      card_sum[c1[j]] += reach[j];
      card_sum[c2[j]] += reach[j];
    }
    win[i] = total - card_sum[own_c1[i]] - card_sum[own_c2[i]];
  }
  std::fill(card_sum, card_sum + 52, 0.0);
  total = 0;
  j = live;
  for (size_t i = own_n; i-- > 0;) {
    const int32_t s = own_strength[i];
    for (; j > 0 && strength[j - 1] > s; --j) {
      total += reach[j - 1];
      card_sum[c1[j - 1]] += reach[j - 1];
      card_sum[c2[j - 1]] += reach[j - 1];
    }
    const double lose = total - card_sum[own_c1[i]] - card_sum[own_c2[i]];
    out[own_hand[i]] = static_cast<T>(amount * (win[i] - lose));
  }
}

void HoldemEndgame::terminal_values(int node, int player, const float* opp_reach, float* out, double* scratch) const {
  terminal_impl(node, player, opp_reach, out, scratch);
}

void HoldemEndgame::terminal_values(int node, int player, const double* opp_reach, double* out, double* scratch) const {
  terminal_impl(node, player, opp_reach, out, scratch);
}

void HoldemEndgame::terminal_values_dense(int node, int player, const double* opp_reach, double* out) const {
  const EndgameNode& n = nodes_[node];
  if (n.kind != BettingTree::kFold && n.kind != BettingTree::kShowdown) fail("node " + std::to_string(node) + " is not terminal");
  const int opp = 1 - player;
  uint64_t mask = board_mask_;
  for (int8_t c : n.dealt) {
    if (c >= 0) mask |= bit(c);
  }
  std::vector<int> board = board_at(node);
  auto strength = [&](int p, int h) {
    int cards[7];
    for (int i = 0; i < 5; ++i) cards[i] = board[i];
    cards[5] = spec_.hands[p][h].c1;
    cards[6] = spec_.hands[p][h].c2;
    return hand_rank(cards, 7);
  };
  for (int h = 0; h < num_hands(player); ++h) {
    out[h] = 0;
    if (hand_mask_[player][h] & mask) continue;
    const int own_strength = n.kind == BettingTree::kShowdown ? strength(player, h) : 0;
    for (int o = 0; o < num_hands(opp); ++o) {
      if ((hand_mask_[opp][o] & mask) || (hand_mask_[opp][o] & hand_mask_[player][h])) continue;
      double payoff;
      if (n.kind == BettingTree::kFold) {
        payoff = (n.player == player ? -1.0 : 1.0) * invested(node, n.player);
      } else {
        const int other = strength(opp, o);
        payoff = own_strength > other ? invested(node, player) : own_strength < other ? -invested(node, player) : 0.0;
      }
      out[h] += opp_reach[o] * payoff;
    }
  }
}

std::vector<int> HoldemEndgame::path_to(int node) const {
  std::vector<int> path;
  for (int n = node; n >= 0; n = nodes_[n].parent) path.push_back(n);
  return std::vector<int>(path.rbegin(), path.rend());
}

uint64_t HoldemEndgame::board_mask_at(int node) const {
  uint64_t mask = board_mask_;
  for (int8_t c : nodes_[node].dealt) {
    if (c >= 0) mask |= bit(c);
  }
  return mask;
}

std::vector<double> HoldemEndgame::compatible_mass(int player, const double* opp_reach) const {
  const int opp = 1 - player;
  double total = 0, card_sum[52] = {};
  for (int o = 0; o < num_hands(opp); ++o) {
    total += opp_reach[o];
    card_sum[spec_.hands[opp][o].c1] += opp_reach[o];
    card_sum[spec_.hands[opp][o].c2] += opp_reach[o];
  }
  std::vector<double> mass(static_cast<size_t>(num_hands(player)));
  for (int h = 0; h < num_hands(player); ++h) {
    const int32_t same = same_hand_[player][h];
    mass[h] = total - card_sum[spec_.hands[player][h].c1] - card_sum[spec_.hands[player][h].c2] + (same >= 0 ? opp_reach[same] : 0.0);
  }
  return mass;
}

std::vector<double> HoldemEndgame::equity(int node, int player, const double* opp_reach) const {
  const int opp = 1 - player;
  const uint64_t mask = board_mask_at(node);
  std::vector<int> board = board_at(node);
  std::vector<int> left;
  for (int c : spec_.deck) {
    if (!(mask & bit(c))) left.push_back(c);
  }
  // Every run-out: no card (river), one (turn) or two (flop).
  std::vector<std::vector<int>> runouts;
  const int missing = 5 - static_cast<int>(board.size());
  if (missing == 0) runouts.push_back({});
  for (size_t i = 0; missing >= 1 && i < left.size(); ++i) {
    if (missing == 1) {
      runouts.push_back({left[i]});
      continue;
    }
    for (size_t j = i + 1; j < left.size(); ++j) runouts.push_back({left[i], left[j]});
  }
  const int own_count = num_hands(player), opp_count = num_hands(opp);
  std::vector<double> share(static_cast<size_t>(own_count), 0.0);
  std::vector<double> runout_mass(static_cast<size_t>(own_count), 0.0);
  std::vector<std::pair<int32_t, int32_t>> own_ranked, opp_ranked;
  std::vector<double> win(static_cast<size_t>(own_count));
  for (const auto& runout : runouts) {
    uint64_t full = mask;
    int cards[7];
    for (int i = 0; i < static_cast<int>(board.size()); ++i) cards[i] = board[i];
    for (size_t i = 0; i < runout.size(); ++i) {
      full |= bit(runout[i]);
      cards[board.size() + i] = runout[i];
    }
    auto ranked = [&](int p, std::vector<std::pair<int32_t, int32_t>>& out) {
      out.clear();
      for (int h = 0; h < num_hands(p); ++h) {
        if (hand_mask_[p][h] & full) continue;
        cards[5] = spec_.hands[p][h].c1;
        cards[6] = spec_.hands[p][h].c2;
        out.emplace_back(hand_rank(cards, 7), h);
      }
      std::sort(out.begin(), out.end());
    };
    ranked(player, own_ranked);
    ranked(opp, opp_ranked);
    // Win and lose sums by the two sweeps of the showdown; ties are the rest of the compatible mass.
    double total = 0, sums[52] = {};
    double all = 0, all_sums[52] = {};
    for (const auto& [s, o] : opp_ranked) {
      all += opp_reach[o];
      all_sums[spec_.hands[opp][o].c1] += opp_reach[o];
      all_sums[spec_.hands[opp][o].c2] += opp_reach[o];
    }
    size_t j = 0;
    for (const auto& [s, h] : own_ranked) {
      for (; j < opp_ranked.size() && opp_ranked[j].first < s; ++j) {
        const int32_t o = opp_ranked[j].second;
        total += opp_reach[o];
        sums[spec_.hands[opp][o].c1] += opp_reach[o];
        sums[spec_.hands[opp][o].c2] += opp_reach[o];
      }
      win[h] = total - sums[spec_.hands[player][h].c1] - sums[spec_.hands[player][h].c2];
    }
    total = 0;
    std::fill(sums, sums + 52, 0.0);
    j = opp_ranked.size();
    for (size_t i = own_ranked.size(); i-- > 0;) {
      const auto [s, h] = own_ranked[i];
      for (; j > 0 && opp_ranked[j - 1].first > s; --j) {
        const int32_t o = opp_ranked[j - 1].second;
        total += opp_reach[o];
        sums[spec_.hands[opp][o].c1] += opp_reach[o];
        sums[spec_.hands[opp][o].c2] += opp_reach[o];
      }
      const int c1 = spec_.hands[player][h].c1, c2 = spec_.hands[player][h].c2;
      const double lose = total - sums[c1] - sums[c2];
      const int32_t same = same_hand_[player][h];
      const double compatible = all - all_sums[c1] - all_sums[c2] + (same >= 0 && !(hand_mask_[opp][same] & full) ? opp_reach[same] : 0.0);
      share[h] += win[h] + 0.5 * (compatible - win[h] - lose);
      runout_mass[h] += compatible;
    }
  }
  (void)opp_count;
  for (int h = 0; h < own_count; ++h) share[h] = runout_mass[h] > 0 ? share[h] / runout_mass[h] : std::nan("");
  return share;
}

}  // namespace holdem
}  // namespace rebel
