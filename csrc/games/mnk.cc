// The m,n,k game (csrc/games/mnk_board.h) as a public-belief-state game: perfect information is
// the case of one private hand per player, so every public state is the position itself and
// ReBeL's search, solvers and best response run on it unchanged. Actions are cells
// (row * n + column); the payoff is +1 / -1 for a line of k, 0 for a draw.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/registry.h"
#include "games/mnk_board.h"

namespace rebel {
namespace {

class MnkGame final : public Game {
 public:
  explicit MnkGame(const mnk::Rules& rules) : rules_(rules), prior_(1, 1.0) { rules_.validate(); }

  std::string name() const override { return "mnk"; }
  GameParams params() const override { return {{"m", rules_.m}, {"n", rules_.n}, {"k", rules_.k}}; }
  int num_hands() const override { return 1; }
  int num_actions() const override { return rules_.cells(); }
  const std::vector<double>& hand_prior() const override { return prior_; }

  bool is_terminal(const History& history) const override { return replay(history).terminal(); }
  int player_to_act(const History& history) const override { return static_cast<int>(history.size() % 2); }
  void legal_actions(const History& history, std::vector<Action>* out) const override {
    replay(history).legal_moves(out);
  }
  void terminal_values(const History& history, int player, const double* opp_reach, double* out) const override {
    out[0] = replay(history).result_for(player) * opp_reach[0];
  }

  // Two planes of the board from player 0's side: player 0's stones, player 1's stones.
  int feature_size() const override { return 2 * rules_.cells(); }
  void public_features(const History& history, float* out) const override {
    const mnk::Board board = replay(history);
    std::fill(out, out + 2 * rules_.cells(), 0.0f);
    for (int c = 0; c < rules_.cells(); ++c) {
      if (board.at(c) != 0) out[(board.at(c) - 1) * rules_.cells() + c] = 1.0f;
    }
  }
  bool features_identify_state() const override { return true; }  // the board is the position
  std::string action_name(Action action) const override { return rules_.cell_name(action); }
  std::string hand_name(int /*hand*/) const override { return "-"; }

 private:
  mnk::Board replay(const History& history) const {
    mnk::Board board(rules_);
    for (Action a : history) board.play(a);  // an illegal history throws std::invalid_argument
    return board;
  }

  mnk::Rules rules_;
  std::vector<double> prior_;
};

GamePtr create_mnk(const GameParams& params) {
  mnk::Rules rules;
  for (const auto& [key, value] : params) {
    if (key == "m") rules.m = value;
    else if (key == "n") rules.n = value;
    else if (key == "k") rules.k = value;
  }
  return std::make_shared<MnkGame>(rules);
}

REBEL_REGISTER_GAME((GameSpec{"mnk",
                              "m,n,k game (m rows, n columns, k in a row wins; 3,3,3 = tic-tac-toe); "
                              "perfect information: one hand per player",
                              {{"m", 3}, {"n", 3}, {"k", 3}},
                              create_mnk}));

}  // namespace
}  // namespace rebel
