// Game interface: two-player zero-sum games where each player's private "hand" is dealt
// once at the start (from a known prior) and every later event is public: a player's action
// or a public chance event (a board card's deal).
//
// A public state is identified by its history of public events. Values are always
// "counterfactual" in the vectorised-CFR sense: for a player i and hand h,
//   v_i(h) = sum_{h'} w(h, h') * r_{-i}(h') * u_i(h, h', z)
// where r_{-i} is the opponent's reach vector *including* its prior, and
// w(h, h') = P(h, h') / (P(h) P(h')) is 1 for independent hands and encodes card
// removal otherwise. With this convention sum_h P(h) v_i(h) is player i's expected payoff.
//
// Public chance. At a chance node player_to_act() is kChancePlayer and legal_actions() lists
// the outcomes (action ids of their own). The outcome probability given the private hands
// must factor over the two hands: P(b | history, h, h') = f_b(h) f_b(h') whenever
// w(h, h') > 0, with f_b(h) >= 0 given by chance_factors(). Dealing a card uniformly from
// the cards no hand holds has this form: f_b(h) = sqrt(1 / #cards left) if h does not hold b,
// else 0 (the number of cards left is the same for every compatible pair of hands). The
// convention then extends through chance unchanged: below outcome b each player's reach is
// r_b(h) = f_b(h) r(h), and the chance node's value is v(h) = sum_b f_b(h) v_b(h), where v_b
// is the counterfactual value below b (computed from the opponent's r_b). terminal_values()
// below a board keep the formula above with w(h, h') of the private deal; the board's card
// removal is inside the reaches. Values of a hand the board makes impossible are 0.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rebel {

using Action = int;
using History = std::vector<Action>;

// Ordered (name, value) parameter list, e.g. {{"num_dice", 1}, {"num_faces", 4}}.
using GameParams = std::vector<std::pair<std::string, int>>;

struct PublicTree;  // core/tree.h

// player_to_act() at a public chance node.
constexpr int kChancePlayer = 2;

class Game {
 public:
  virtual ~Game() = default;

  virtual std::string name() const = 0;
  virtual GameParams params() const = 0;

  // Number of possible private hands of one player (same for both players).
  virtual int num_hands() const = 0;
  // Action ids are 0 .. num_actions()-1.
  virtual int num_actions() const = 0;
  // P(h) for one player's hand (the marginal; both players share it).
  virtual const std::vector<double>& hand_prior() const = 0;

  virtual bool is_terminal(const History& history) const = 0;
  // Player to act (0 or 1, or kChancePlayer at a public chance node) at a non-terminal history.
  virtual int player_to_act(const History& history) const = 0;
  // Legal actions (at a chance node: the outcomes) at a non-terminal history, strictly
  // increasing ids.
  virtual void legal_actions(const History& history, std::vector<Action>* out) const = 0;

  // Counterfactual values (see file comment) of every hand of `player` at a terminal
  // history, given the opponent's reach vector (length num_hands()).
  virtual void terminal_values(const History& history, int player, const double* opp_reach,
                               double* out) const = 0;
  // terminal_values() of every terminal node n of `tree` (a tree of this game), written to
  // values[n * H ...] from the opponent's reach at opp_reach[n * H ...] (H = num_hands()),
  // nodes in tree.terminal_nodes order. An override must give the same bits as the default,
  // which calls terminal_values(tree.history[n], ...) node by node; it may read the tree's
  // arrays (e.g. the last action from tree.action[tree.parent[n]]) instead of the histories.
  virtual void terminal_values_batch(const PublicTree& tree, int player, const double* opp_reach,
                                     double* values) const;

  // True when some history has a public chance node.
  virtual bool has_public_chance() const { return false; }
  // f_b(h) for every hand h (see the file comment) at the chance node `history` and its
  // outcome `outcome`. Only called at chance nodes.
  virtual void chance_factors(const History& history, Action outcome, double* out) const;

  // w(h_player, h_opponent) = P(h, h') / (P(h) P(h')); 1 when hands are independent.
  virtual bool hands_independent() const { return true; }
  virtual double hand_pair_weight(int /*hand*/, int /*opp_hand*/) const { return 1.0; }

  // Compact public-state features for a value network (does not include beliefs).
  virtual int feature_size() const = 0;
  virtual void public_features(const History& history, float* out) const = 0;
  // True when two histories with the same player to act and the same public features lead
  // to the same game from there on (a perfect-information game's position); lets
  // evaluate_perfect_info solve each state once.
  virtual bool features_identify_state() const { return false; }
  // The stake of a public state, for value nets whose outputs are relative to it (poker:
  // the pot per player, which values scale with): a public feature index f such that
  // features[f] * stake_feature_scale() is the stake in the game's value units, > 0 at every
  // state. -1 (the default): the game has no such feature.
  virtual int stake_feature() const { return -1; }
  virtual double stake_feature_scale() const { return 1.0; }

  virtual std::string action_name(Action action) const = 0;
  virtual std::string hand_name(int hand) const { return std::to_string(hand); }

  // Number of public-tree nodes below (and including) `root` down to `max_depth` actions
  // (max_depth < 0: unlimited). Must not allocate the tree; may stop counting past `cap`
  // and return any value > cap. Default: a counting traversal.
  virtual double count_tree_nodes(const History& root, int max_depth, double cap) const;

  std::string description() const;  // e.g. "liars_dice(num_dice=1, num_faces=4)"
};

using GamePtr = std::shared_ptr<const Game>;

// The hands a player can hold at `history` given its public chance outcomes (a hand that
// holds a dealt board card cannot): possible[h] = 0 where some outcome's factor f_b(h) is 0.
// All ones for games without public chance. `history` must be legal.
std::vector<char> possible_hands(const Game& game, const History& history);

// Size of one value-net query row: acting player, queried player, public features,
// beliefs of player 0, beliefs of player 1.
inline int query_size(const Game& game) { return 2 + game.feature_size() + 2 * game.num_hands(); }

}  // namespace rebel
