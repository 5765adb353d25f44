// Regret matching for two-player zero-sum normal-form (matrix) games.
//
// The payoff matrix A (rows x cols, row-major) holds the row player's payoff; the column
// player receives -A. Both players start from zero regrets, i.e. the uniform strategy.
//
// Exploitability follows core/best_response.h: (BR_row + BR_col) / 2 where
//   BR_row = max_i (A y)_i  and  BR_col = max_j (-x^T A)_j,
// which equals NashConv / 2 (the sum of both players' best-response gains, halved) in a
// zero-sum game. It is 0 exactly at a Nash equilibrium.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace rebel {

struct MatrixGame {
  int rows = 0;
  int cols = 0;
  std::vector<double> payoff;  // row-major, payoff[i * cols + j] to the row player

  // Throws std::invalid_argument unless rows, cols >= 1, the size matches and all
  // payoffs are finite.
  MatrixGame(int rows, int cols, std::vector<double> payoff);
  double at(int i, int j) const { return payoff[static_cast<size_t>(i) * cols + j]; }
};

// Built-in games: "rps" (rock-paper-scissors, +-1) and "modified_rps" (the ReBeL paper's
// variant where any outcome involving scissors pays +-2; equilibrium R = P = 0.4,
// S = 0.2 for both players). Actions are ordered rock, paper, scissors.
MatrixGame make_matrix_game(const std::string& name);  // throws std::invalid_argument
std::vector<std::string> matrix_game_names();

enum class RegretRule { kRm, kRmPlus };

// Parses "rm" or "rm+"; throws std::invalid_argument.
RegretRule parse_regret_rule(const std::string& name);

struct MatrixSolverParams {
  RegretRule rule = RegretRule::kRm;
  bool linear_avg = false;   // iteration t enters the average with weight t (else 1)
  bool alternating = false;  // the column player responds to the row player's new strategy
};

struct MatrixEvaluation {
  double value = 0.0;                 // x^T A y, the row player's expected payoff
  std::array<double, 2> br_values{};  // BR_row, BR_col (see the file comment)
  double exploitability = 0.0;        // (BR_row + BR_col) / 2
};

// Evaluates a strategy pair (x over rows, y over columns); throws std::invalid_argument
// unless both are probability vectors of the right size.
MatrixEvaluation evaluate(const MatrixGame& game, const std::vector<double>& x,
                          const std::vector<double>& y);

class MatrixRegretSolver {
 public:
  MatrixRegretSolver(MatrixGame game, MatrixSolverParams params);

  void run(long iterations);
  long iterations() const { return iterations_; }

  // Regret-matching strategy of player 0 (rows) or 1 (columns) for the next iteration.
  std::vector<double> current_strategy(int player) const;
  // Weighted average of the strategies played so far; uniform before any iteration.
  std::vector<double> average_strategy(int player) const;

  const MatrixGame& game() const { return game_; }

 private:
  void iterate();
  // Adds the regrets of `player` against the opponent strategy `opp`.
  void update_regrets(int player, const std::vector<double>& opp);

  MatrixGame game_;
  MatrixSolverParams params_;
  long iterations_ = 0;
  std::array<std::vector<double>, 2> regrets_, strategy_sum_, strategy_;
  std::vector<double> utility_;  // scratch: payoff of each pure action
};

}  // namespace rebel
