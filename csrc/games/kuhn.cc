// Kuhn poker: cards J < Q < K (hands 0, 1, 2), ante 1 each, one bet of 1.
// Actions: 0 = pass (check / fold), 1 = bet (bet / call). Player 0 acts first.
// Hands are dealt without replacement, so w(h, h') = P(h, h') / (P(h) P(h')) = 3/2 for
// h != h' and 0 otherwise. Game value for player 0: -1/18.
#include <algorithm>
#include <stdexcept>

#include "core/registry.h"

namespace rebel {
namespace {

class Kuhn final : public Game {
 public:
  Kuhn() : prior_(3, 1.0 / 3.0) {}

  std::string name() const override { return "kuhn"; }
  GameParams params() const override { return {}; }
  int num_hands() const override { return 3; }
  int num_actions() const override { return 2; }
  const std::vector<double>& hand_prior() const override { return prior_; }

  bool is_terminal(const History& h) const override {
    if (h.size() == 2) return !(h[0] == 0 && h[1] == 1);  // pp, bp, bb
    return h.size() >= 3;
  }
  int player_to_act(const History& h) const override { return static_cast<int>(h.size() % 2); }
  void legal_actions(const History& h, std::vector<Action>* out) const override {
    (void)h;
    *out = {0, 1};
  }

  void terminal_values(const History& h, int player, const double* opp_reach,
                       double* out) const override {
    // Payoff to player 0: +-stake at a showdown, or the folder loses 1.
    int folder = -1;
    double stake = 1.0;
    if (h == History{1, 0}) folder = 1;
    else if (h == History{0, 1, 0}) folder = 0;
    else if (h == History{1, 1} || h == History{0, 1, 1}) stake = 2.0;
    for (int x = 0; x < 3; ++x) {
      double v = 0.0;
      for (int o = 0; o < 3; ++o) {
        if (o == x) continue;
        double u;  // payoff to `player` holding x against o
        if (folder >= 0) u = (folder == player) ? -1.0 : 1.0;
        else u = (x > o) ? stake : -stake;
        v += 1.5 * opp_reach[o] * u;
      }
      out[x] = v;
    }
  }
  bool hands_independent() const override { return false; }
  double hand_pair_weight(int hand, int opp_hand) const override { return hand == opp_hand ? 0.0 : 1.5; }

  int feature_size() const override { return 6; }
  void public_features(const History& h, float* out) const override {
    std::fill(out, out + 6, 0.0f);
    for (size_t i = 0; i < h.size() && i < 3; ++i) out[2 * i + h[i]] = 1.0f;
  }
  std::string action_name(Action a) const override { return a == 0 ? "pass" : "bet"; }
  std::string hand_name(int hand) const override { return std::string(1, "JQK"[hand]); }

 private:
  std::vector<double> prior_;
};

GamePtr create_kuhn(const GameParams&) { return std::make_shared<Kuhn>(); }

REBEL_REGISTER_GAME((GameSpec{"kuhn", "Kuhn poker (3 cards, ante 1, one bet of 1)", {}, create_kuhn}));

}  // namespace
}  // namespace rebel
