// Game interface: two-player zero-sum games where each player's private "hand" is dealt
// once at the start (from a known prior) and every later action is public.
//
// A public state is identified by its history of public actions. Values are always
// "counterfactual" in the vectorised-CFR sense: for a player i and hand h,
//   v_i(h) = sum_{h'} w(h, h') * r_{-i}(h') * u_i(h, h', z)
// where r_{-i} is the opponent's reach vector *including* its prior, and
// w(h, h') = P(h, h') / (P(h) P(h')) is 1 for independent hands and encodes card
// removal otherwise. With this convention sum_h P(h) v_i(h) is player i's expected payoff.
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
  // Player to act (0 or 1) at a non-terminal history.
  virtual int player_to_act(const History& history) const = 0;
  // Legal actions at a non-terminal history, strictly increasing ids.
  virtual void legal_actions(const History& history, std::vector<Action>* out) const = 0;

  // Counterfactual values (see file comment) of every hand of `player` at a terminal
  // history, given the opponent's reach vector (length num_hands()).
  virtual void terminal_values(const History& history, int player, const double* opp_reach,
                               double* out) const = 0;

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

  virtual std::string action_name(Action action) const = 0;
  virtual std::string hand_name(int hand) const { return std::to_string(hand); }

  // Number of public-tree nodes below (and including) `root` down to `max_depth` actions
  // (max_depth < 0: unlimited). Must not allocate the tree; may stop counting past `cap`
  // and return any value > cap. Default: a counting traversal.
  virtual double count_tree_nodes(const History& root, int max_depth, double cap) const;

  std::string description() const;  // e.g. "liars_dice(num_dice=1, num_faces=4)"
};

using GamePtr = std::shared_ptr<const Game>;

// Size of one value-net query row: acting player, queried player, public features,
// beliefs of player 0, beliefs of player 1.
inline int query_size(const Game& game) { return 2 + game.feature_size() + 2 * game.num_hands(); }

}  // namespace rebel
