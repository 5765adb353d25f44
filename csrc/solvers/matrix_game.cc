#include "solvers/matrix_game.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rebel {
namespace {

// Strategy proportional to the positive regrets; uniform when none is positive.
void regret_matching(const std::vector<double>& regrets, std::vector<double>* out) {
  const size_t k = regrets.size();
  out->resize(k);
  double total = 0.0;
  for (size_t a = 0; a < k; ++a) total += std::max(regrets[a], 0.0);
  for (size_t a = 0; a < k; ++a) {
    (*out)[a] = total > 0.0 ? std::max(regrets[a], 0.0) / total : 1.0 / static_cast<double>(k);
  }
}

std::vector<double> normalized_or_uniform(const std::vector<double>& weights) {
  double total = 0.0;
  for (double w : weights) total += w;
  std::vector<double> out(weights.size(), 1.0 / static_cast<double>(weights.size()));
  if (total > 0.0) {
    for (size_t a = 0; a < weights.size(); ++a) out[a] = weights[a] / total;
  }
  return out;
}

void check_strategy(const std::vector<double>& s, int size, const char* what) {
  if (s.size() != static_cast<size_t>(size)) {
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(s.size()) + " entries, expected " +
                                std::to_string(size));
  }
  double total = 0.0;
  for (double p : s) {
    if (!std::isfinite(p) || p < 0.0) throw std::invalid_argument(std::string(what) + " must be finite and non-negative");
    total += p;
  }
  if (std::abs(total - 1.0) > 1e-6) throw std::invalid_argument(std::string(what) + " must sum to 1");
}

void check_player(int player) {
  if (player != 0 && player != 1) throw std::invalid_argument("player must be 0 or 1");
}

}  // namespace

MatrixGame::MatrixGame(int rows_in, int cols_in, std::vector<double> payoff_in)
    : rows(rows_in), cols(cols_in), payoff(std::move(payoff_in)) {
  if (rows < 1 || cols < 1) {
    throw std::invalid_argument("matrix game needs at least one row and one column, got " +
                                std::to_string(rows) + "x" + std::to_string(cols));
  }
  if (payoff.size() != static_cast<size_t>(rows) * cols) {
    throw std::invalid_argument("payoff has " + std::to_string(payoff.size()) + " entries, expected " +
                                std::to_string(static_cast<size_t>(rows) * cols));
  }
  for (double v : payoff) {
    if (!std::isfinite(v)) throw std::invalid_argument("payoff entries must be finite");
  }
}

MatrixGame make_matrix_game(const std::string& name) {
  if (name == "rps") return MatrixGame(3, 3, {0, -1, 1, 1, 0, -1, -1, 1, 0});
  if (name == "modified_rps") return MatrixGame(3, 3, {0, -1, 2, 1, 0, -2, -2, 2, 0});
  throw std::invalid_argument("unknown matrix game '" + name + "'; known: rps, modified_rps");
}

std::vector<std::string> matrix_game_names() { return {"rps", "modified_rps"}; }

RegretRule parse_regret_rule(const std::string& name) {
  if (name == "rm") return RegretRule::kRm;
  if (name == "rm+") return RegretRule::kRmPlus;
  throw std::invalid_argument("unknown algorithm '" + name + "'; expected 'rm' or 'rm+'");
}

MatrixEvaluation evaluate(const MatrixGame& game, const std::vector<double>& x, const std::vector<double>& y) {
  check_strategy(x, game.rows, "row strategy");
  check_strategy(y, game.cols, "column strategy");
  MatrixEvaluation e;
  double best_row = -INFINITY;
  for (int i = 0; i < game.rows; ++i) {
    double u = 0.0;  // (A y)_i
    for (int j = 0; j < game.cols; ++j) u += game.at(i, j) * y[j];
    best_row = std::max(best_row, u);
    e.value += x[i] * u;
  }
  double best_col = -INFINITY;
  for (int j = 0; j < game.cols; ++j) {
    double u = 0.0;  // (-x^T A)_j
    for (int i = 0; i < game.rows; ++i) u -= x[i] * game.at(i, j);
    best_col = std::max(best_col, u);
  }
  e.br_values = {best_row, best_col};
  e.exploitability = 0.5 * (best_row + best_col);
  return e;
}

MatrixRegretSolver::MatrixRegretSolver(MatrixGame game, MatrixSolverParams params)
    : game_(std::move(game)), params_(params) {
  const std::array<int, 2> sizes{game_.rows, game_.cols};
  for (int p = 0; p < 2; ++p) {
    regrets_[p].assign(sizes[p], 0.0);
    strategy_sum_[p].assign(sizes[p], 0.0);
    strategy_[p].assign(sizes[p], 1.0 / sizes[p]);
  }
}

void MatrixRegretSolver::run(long iterations) {
  if (iterations < 0) throw std::invalid_argument("iterations must be >= 0, got " + std::to_string(iterations));
  for (long i = 0; i < iterations; ++i) iterate();
}

void MatrixRegretSolver::iterate() {
  ++iterations_;
  const double weight = params_.linear_avg ? static_cast<double>(iterations_) : 1.0;
  for (int p = 0; p < 2; ++p) {
    regret_matching(regrets_[p], &strategy_[p]);
    for (size_t a = 0; a < strategy_[p].size(); ++a) strategy_sum_[p][a] += weight * strategy_[p][a];
  }
  update_regrets(0, strategy_[1]);
  // Alternating: the column player's regrets are taken against the row player's
  // already-updated strategy; its own played strategy (and average) stays y_t.
  if (params_.alternating) {
    std::vector<double> next_row;
    regret_matching(regrets_[0], &next_row);
    update_regrets(1, next_row);
  } else {
    update_regrets(1, strategy_[0]);
  }
}

void MatrixRegretSolver::update_regrets(int player, const std::vector<double>& opp) {
  const int k = player == 0 ? game_.rows : game_.cols;
  utility_.assign(k, 0.0);
  if (player == 0) {
    for (int i = 0; i < game_.rows; ++i)
      for (int j = 0; j < game_.cols; ++j) utility_[i] += game_.at(i, j) * opp[j];
  } else {
    for (int i = 0; i < game_.rows; ++i)
      for (int j = 0; j < game_.cols; ++j) utility_[j] -= opp[i] * game_.at(i, j);
  }
  double expected = 0.0;
  for (int a = 0; a < k; ++a) expected += strategy_[player][a] * utility_[a];
  std::vector<double>& r = regrets_[player];
  for (int a = 0; a < k; ++a) {
    r[a] += utility_[a] - expected;
    if (params_.rule == RegretRule::kRmPlus) r[a] = std::max(r[a], 0.0);
  }
}

std::vector<double> MatrixRegretSolver::current_strategy(int player) const {
  check_player(player);
  std::vector<double> out;
  regret_matching(regrets_[player], &out);
  return out;
}

std::vector<double> MatrixRegretSolver::average_strategy(int player) const {
  check_player(player);
  return normalized_or_uniform(strategy_sum_[player]);
}

}  // namespace rebel
