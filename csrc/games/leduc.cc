// Leduc hold'em, two games with public chance (the board card's deal).
//
// Cards and hands. Six cards, J Q K in two suits; card c has rank c / 2 (0 J, 1 Q, 2 K) and
// suit c % 2 (0 "s", 1 "h"): 0 Js, 1 Jh, 2 Qs, 3 Qh, 4 Ks, 5 Kh (the order of OpenSpiel's
// leduc_poker cards and of universal_poker's deal outcomes). A hand is the private card, so
// there are 6 hands with prior 1/6, and w(h, h') = P(h, h') / (P(h) P(h')) = (1/30) / (1/36)
// = 1.2 for h != h', 0 for h == h'. Both players ante, get one private card, bet (round 1),
// see one public board card, bet again (round 2). Showdown: a private card that pairs the
// board wins, else the higher private rank wins, equal ranks split. Payoffs are chips won or
// lost relative to the start (the ante included: a fold before any bet in `leduc` is -1).
//
// `leduc` is OpenSpiel's `leduc_poker` (games/leduc_poker/leduc_poker.cc): ante 1 each;
// action ids 0 fold, 1 call (a check when nothing is owed), 2 raise; a raise adds 2 in round 1
// and 4 in round 2 on top of matching the bet, at most 2 raises per round; player 0 acts first
// in both rounds. Fold is legal only when facing a bet (LegalActions: "only allow fold when
// under pressure"); call is always legal; raise while fewer than 2 raises this round. A call
// ends the round unless it is the round's first action (check-check, or a raise called).
//
// `leduc_nolimit` is DeepStack-Leduc's no-limit game as OpenSpiel's universal_poker plays it
// with the "fcpa" betting abstraction and the gamedef OpenSpiel uses for it
// (universal_poker.h / acpc_game_test.cc): "nolimit, numPlayers = 2, numRounds = 2,
// stack = 1200 1200, blind = 100 100, firstPlayer = 1 1, numSuits = 2, numRanks = 3,
// numHoleCards = 1, numBoardCards = 0 1". Parameters: stack (default 1200) and ante (default
// 100; the gamedef's two equal blinds, which act exactly as an ante: nobody owes anything at
// the start). Action ids 0 fold, 1 call, 2 bet/raise pot, 3 all-in. With spent[] each
// player's total commitment and max_spent = max(spent), at a decision of player p:
//  - fold is legal iff spent[p] < max_spent (ACPC isValidAction: folding with nothing to call
//    is invalid);
//  - call is always legal (puts spent[p] = max_spent);
//  - raises are legal iff nobody is all-in (max_spent < stack; ACPC raiseIsValid: at most one
//    acting player cannot raise). The pot bet raises to
//      pot_to = max_spent + (spent[0] + spent[1] + max_spent - spent[p]) = 3 * max_spent
//    (universal_poker's PotSize(): the bet plus the pot after calling, heads-up), legal iff
//    pot_to <= stack; all-in raises to the stack and is legal iff pot_to != stack (when the
//    pot bet is exactly the stack only the pot bet is listed). A pot raise always exceeds
//    ACPC's minimum raise (the last raise increment is at most max_spent < 2 * max_spent),
//    and ACPC's per-round action cap (64) is never reached since each raise triples the bet.
// Player 0 acts first in both rounds (firstPlayer = 1 1); a call ends the round unless it is
// the round's first action (ACPC: all acting players have called). When a call leaves both
// players all-in in round 1 the board is still dealt (a chance node), then the showdown.
// With the defaults the bets run 100 -> 300 -> 900 -> all-in 1200. fold_without_bet = 1
// (default 0) offers fold at every decision, as DeepStack-Leduc's own tree builder does
// (Source/Tree/tree_builder.lua); folding with nothing to call is dominated, so the game's
// value is the same, but a uniform-random strategy is not (its figure of about 175 chips is
// measured on that tree). The parameter is left out of params() when 0, so the default
// game's description is unchanged.
//
// Chance. The board deal is a public chance node (player kChancePlayer) whose outcomes are
// the six cards, action id base + c (base 3 in `leduc`, 4 in `leduc_nolimit`). Given both
// private cards 4 cards remain, so P(b | h, h') = 1/4 = f_b(h) f_b(h') with f_b(h) = 1/2 for
// h != b, 0 for h == b. terminal_values() below a board treat opponent hands holding the
// board card as impossible (their reach, which includes f_b, is 0 anyway) and give a hand
// holding the board card the value 0.
//
// Terminal values never loop over hand pairs: a fold pays every hand the same, so it is the
// opponent's mass without the hand's own card (the only hand sharing a card) times 1.2 times
// the payoff; a showdown sorts the hands by strength once per board (in the constructor) and
// scans them with running sums of the weaker and of the stronger mass, O(H) per call. Both
// add masses rather than subtract them from a total, which keeps the rounding to a few ulps
// of the result.
#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/registry.h"

namespace rebel {
namespace {

constexpr int kCards = 6;
constexpr double kPairWeight = 36.0 / 30.0;  // w(h, h') for h != h'
constexpr double kBoardFactor = 0.5;        // sqrt(1 / 4 cards left)
constexpr int kFold = 0, kCall = 1, kRaise = 2, kAllIn = 3;

std::string card_name(int c) { return std::string(1, "JQK"[c / 2]) + "sh"[c % 2]; }

// Strength of private card h at a showdown on board b (h != b): pair above every rank.
int strength(int h, int b) { return h / 2 == b / 2 ? 3 : h / 2; }

// The public state a history leads to.
struct State {
  int round = 0;        // 0 before the board, 1 after
  int board = -1;       // board card, -1 before the deal
  int64_t spent[2] = {0, 0};
  int64_t max_spent = 0;
  int raises = 0;       // raises in the current round
  int actions = 0;      // actions in the current round
  int to_act = 0;       // 0, 1, kChancePlayer; -1 at a terminal
  int folder = -1;      // the player who folded, at a fold terminal
  bool terminal() const { return to_act < 0; }
  bool all_in(int64_t stack) const { return max_spent >= stack; }
};

class Leduc final : public Game {
 public:
  // limit: `leduc` (ante 1, fixed raises); otherwise `leduc_nolimit` with the given stack and ante.
  Leduc(bool limit, int stack, int ante, bool fold_without_bet = false)
      : limit_(limit), fold_without_bet_(fold_without_bet), stack_(stack), ante_(ante), prior_(kCards, 1.0 / kCards) {
    if (limit_) {
      cap_ = ante_ + 2 * 2 + 2 * 4;  // the most a player can commit: 13
      raise_scale_ = 2;
    } else {
      cap_ = stack_;
      // Raises one round can hold: pot raises (each triples the bet) while below the stack,
      // then an all-in.
      int64_t bet = ante_;
      raise_scale_ = 1;
      while (3 * bet < stack_) {
        bet *= 3;
        ++raise_scale_;
      }
    }
    chance_base_ = limit_ ? 3 : 4;
    for (int b = 0; b < kCards; ++b) {
      auto& order = order_[b];
      order.clear();
      for (int h = 0; h < kCards; ++h) {
        if (h != b) order.push_back(h);
      }
      std::stable_sort(order.begin(), order.end(),
                       [b](int x, int y) { return strength(x, b) < strength(y, b); });
      for (size_t k = 1; k <= order.size(); ++k) {
        if (k == order.size() || strength(order[k], b) != strength(order[k - 1], b)) {
          group_end_[b].push_back(static_cast<int>(k));
        }
      }
    }
  }

  std::string name() const override { return limit_ ? "leduc" : "leduc_nolimit"; }
  GameParams params() const override {
    if (limit_) return {};
    if (!fold_without_bet_) return {{"stack", static_cast<int>(stack_)}, {"ante", static_cast<int>(ante_)}};
    return {{"stack", static_cast<int>(stack_)}, {"ante", static_cast<int>(ante_)}, {"fold_without_bet", 1}};
  }
  int num_hands() const override { return kCards; }
  int num_actions() const override { return chance_base_ + kCards; }
  const std::vector<double>& hand_prior() const override { return prior_; }

  bool is_terminal(const History& h) const override { return replay(h).terminal(); }
  int player_to_act(const History& h) const override {
    const State s = replay(h);
    if (s.terminal()) throw std::logic_error(name() + ": no player acts at a terminal history");
    return s.to_act;
  }

  void legal_actions(const History& h, std::vector<Action>* out) const override {
    legal_at(replay(h), out);
  }

  bool has_public_chance() const override { return true; }
  void chance_factors(const History& h, Action outcome, double* out) const override {
    const State s = replay(h);
    if (s.to_act != kChancePlayer) throw std::logic_error(name() + ": chance_factors at a non-chance history");
    const int b = outcome - chance_base_;
    if (b < 0 || b >= kCards) throw std::logic_error(name() + ": chance outcome out of range");
    for (int x = 0; x < kCards; ++x) out[x] = x == b ? 0.0 : kBoardFactor;
  }

  bool hands_independent() const override { return false; }
  double hand_pair_weight(int hand, int opp_hand) const override { return hand == opp_hand ? 0.0 : kPairWeight; }

  void terminal_values(const History& h, int player, const double* opp_reach, double* out) const override {
    const State s = replay(h);
    if (!s.terminal()) throw std::logic_error(name() + ": terminal_values at a non-terminal history");
    const int b = s.board;
    if (s.folder >= 0) {
      // The folder loses what it committed, whatever the cards: every hand gets the opponent
      // mass the board allows less the hands sharing its card (itself), as the sum of the
      // masses before and after it (prefix and suffix sums: no cancellation).
      const double u = static_cast<double>(player == s.folder ? -s.spent[s.folder] : s.spent[s.folder]);
      std::array<double, kCards + 1> after{};
      for (int o = kCards - 1; o >= 0; --o) after[o] = after[o + 1] + (o == b ? 0.0 : opp_reach[o]);
      double before = 0.0;
      for (int x = 0; x < kCards; ++x) {
        out[x] = x == b ? 0.0 : kPairWeight * (before + after[x + 1]) * u;
        if (x != b) before += opp_reach[x];
      }
      return;
    }
    // Showdown: both committed the same amount, which the winner takes from the loser.
    const double stake = static_cast<double>(s.spent[0]);
    const auto& order = order_[b];
    const auto& groups = group_end_[b];
    out[b] = 0.0;
    // Two scans over the strength groups: the opponent mass strictly weaker (prefix sums)
    // and strictly stronger (suffix sums, not total - weaker - tied, which would cancel).
    // The hand's own card (the only opponent hand sharing a card with it) lies in its group
    // and ties, so it adds to neither.
    std::array<double, kCards> above{};
    double mass = 0.0;
    for (size_t g = groups.size(); g-- > 0;) {
      above[g] = mass;
      for (int k = g == 0 ? 0 : groups[g - 1]; k < groups[g]; ++k) mass += opp_reach[order[k]];
    }
    double below = 0.0;
    for (size_t g = 0; g < groups.size(); ++g) {
      const int begin = g == 0 ? 0 : groups[g - 1];
      for (int k = begin; k < groups[g]; ++k) out[order[k]] = kPairWeight * stake * (below - above[g]);
      for (int k = begin; k < groups[g]; ++k) below += opp_reach[order[k]];
    }
  }

  // round one-hot (2), board one-hot (6), player to act one-hot (2), facing a bet, raises
  // this round (scaled), something happened this round, each player's commitment and the pot
  // relative to the most a player can commit (the stack; 13 in the limit game).
  int feature_size() const override { return 16; }
  void public_features(const History& h, float* out) const override {
    std::fill(out, out + feature_size(), 0.0f);
    const State s = replay(h);
    out[s.round] = 1.0f;
    if (s.board >= 0) out[2 + s.board] = 1.0f;
    if (s.to_act == 0 || s.to_act == 1) {
      out[8 + s.to_act] = 1.0f;
      out[10] = s.spent[s.to_act] < s.max_spent ? 1.0f : 0.0f;
    }
    out[11] = static_cast<float>(s.raises) / static_cast<float>(raise_scale_);
    out[12] = s.actions > 0 ? 1.0f : 0.0f;
    const double cap = static_cast<double>(cap_);
    out[13] = static_cast<float>(s.spent[0] / cap);
    out[14] = static_cast<float>(s.spent[1] / cap);
    out[15] = static_cast<float>((s.spent[0] + s.spent[1]) / (2.0 * cap));
  }

  // Feature 15, the mean commitment over the cap, times the cap: the pot per player (>= the
  // ante everywhere; at the round's end, where the net is asked, both commitments are equal).
  int stake_feature() const override { return 15; }
  double stake_feature_scale() const override { return static_cast<double>(cap_); }

  std::string action_name(Action a) const override {
    if (a >= chance_base_) return card_name(a - chance_base_);
    switch (a) {
      case kFold: return "fold";
      case kCall: return "call";
      case kRaise: return limit_ ? "raise" : "bet pot";
      default: return "all-in";
    }
  }
  std::string hand_name(int hand) const override { return card_name(hand); }

 private:
  State initial() const {
    State s;
    s.spent[0] = s.spent[1] = s.max_spent = ante_;
    return s;
  }

  void legal_at(const State& s, std::vector<Action>* out) const {
    out->clear();
    if (s.terminal()) return;
    if (s.to_act == kChancePlayer) {
      for (int c = 0; c < kCards; ++c) out->push_back(chance_base_ + c);
      return;
    }
    const int p = s.to_act;
    if (s.spent[p] < s.max_spent || fold_without_bet_) out->push_back(kFold);
    out->push_back(kCall);
    if (limit_) {
      if (s.raises < 2) out->push_back(kRaise);
      return;
    }
    if (s.all_in(stack_)) return;
    const int64_t pot_to = 3 * s.max_spent;
    if (pot_to <= stack_) out->push_back(kRaise);
    if (pot_to != stack_) out->push_back(kAllIn);
  }

  // Applies a legal action (the caller checked it).
  void apply(State& s, Action a) const {
    if (s.to_act == kChancePlayer) {
      s.board = a - chance_base_;
      s.round = 1;
      s.raises = 0;
      s.actions = 0;
      // Both all-in after round 1: straight to the showdown.
      s.to_act = (!limit_ && s.all_in(stack_)) ? -1 : 0;
      return;
    }
    const int p = s.to_act;
    ++s.actions;
    if (a == kFold) {
      s.folder = p;
      s.to_act = -1;
      return;
    }
    if (a == kCall) {
      s.spent[p] = s.max_spent;
      if (s.actions >= 2) {
        s.to_act = s.round == 0 ? kChancePlayer : -1;  // round over
      } else {
        s.to_act = 1 - p;
      }
      return;
    }
    if (limit_) {
      s.max_spent += s.round == 0 ? 2 : 4;
    } else {
      s.max_spent = a == kRaise ? 3 * s.max_spent : stack_;
    }
    s.spent[p] = s.max_spent;
    ++s.raises;
    s.to_act = 1 - p;
  }

  State replay(const History& h) const {
    State s = initial();
    std::vector<Action> legal;
    for (Action a : h) {
      legal_at(s, &legal);
      if (std::find(legal.begin(), legal.end(), a) == legal.end()) {
        throw std::invalid_argument(name() + ": action " + std::to_string(a) + " is not legal here");
      }
      apply(s, a);
    }
    return s;
  }

  bool limit_;
  bool fold_without_bet_;  // DeepStack-Leduc's tree: fold is offered at every decision
  int64_t stack_, ante_, cap_ = 0;
  int raise_scale_ = 1, chance_base_ = 3;
  std::vector<double> prior_;
  std::array<std::vector<int>, kCards> order_;  // per board: the other cards, weakest first
  std::array<std::vector<int>, kCards> group_end_;  // per board: ends of the equal-strength runs in order_
};

GamePtr create_leduc(const GameParams&) { return std::make_shared<Leduc>(true, 0, 1); }

GamePtr create_leduc_nolimit(const GameParams& p) {
  int stack = 1200, ante = 100, fold_without_bet = 0;
  for (const auto& [k, v] : p) {
    if (k == "stack") stack = v;
    if (k == "ante") ante = v;
    if (k == "fold_without_bet") fold_without_bet = v;
  }
  if (fold_without_bet != 0 && fold_without_bet != 1) {
    throw std::invalid_argument("leduc_nolimit: fold_without_bet must be 0 or 1, got " +
                                std::to_string(fold_without_bet));
  }
  if (ante <= 0) throw std::invalid_argument("leduc_nolimit: ante must be > 0, got " + std::to_string(ante));
  if (stack <= 0) throw std::invalid_argument("leduc_nolimit: stack must be > 0, got " + std::to_string(stack));
  if (stack <= ante) {
    throw std::invalid_argument("leduc_nolimit: stack must exceed the ante, got stack " + std::to_string(stack) +
                                " <= ante " + std::to_string(ante));
  }
  return std::make_shared<Leduc>(false, stack, ante, fold_without_bet == 1);
}

REBEL_REGISTER_GAME((GameSpec{"leduc", "Leduc hold'em, limit (OpenSpiel leduc_poker: ante 1, raises 2/4, 2 per round)",
                              {}, create_leduc}));
REBEL_REGISTER_GAME((GameSpec{"leduc_nolimit",
                              "no-limit Leduc hold'em (DeepStack-Leduc; universal_poker fcpa: fold, call, pot, all-in)",
                              {{"stack", 1200}, {"ante", 100}, {"fold_without_bet", 0}}, create_leduc_nolimit}));

}  // namespace
}  // namespace rebel
