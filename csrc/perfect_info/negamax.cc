#include "perfect_info/negamax.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace rebel {
namespace mnk {

ExactSolver::ExactSolver(const Rules& rules, long long max_positions) : rules_(rules), max_positions_(max_positions) {
  rules_.validate();
  if (rules_.cells() > 64) {
    throw std::invalid_argument("mnk solver: exact solving is limited to boards of at most 64 cells, got " +
                                std::to_string(rules_.cells()) + " (" + rules_.description() + ")");
  }
  if (max_positions < 1) throw std::invalid_argument("mnk solver: max_positions must be >= 1");
  order_.resize(static_cast<size_t>(rules_.cells()));
  for (int c = 0; c < rules_.cells(); ++c) order_[static_cast<size_t>(c)] = c;
  const double cr = (rules_.m - 1) / 2.0, cc = (rules_.n - 1) / 2.0;
  std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
    const double da = std::abs(a / rules_.n - cr) + std::abs(a % rules_.n - cc);
    const double db = std::abs(b / rules_.n - cr) + std::abs(b % rules_.n - cc);
    return da < db;
  });
}

ExactSolver::Key ExactSolver::key_of(const Board& board) const {
  uint64_t stones[2] = {0, 0};
  for (int c = 0; c < rules_.cells(); ++c) {
    const int8_t s = board.at(c);
    if (s != 0) stones[s - 1] |= uint64_t{1} << c;
  }
  const int me = board.to_move();
  return Key{stones[me], stones[1 - me]};
}

int ExactSolver::negamax(Board& board, int alpha, int beta) {
  if (++searched_ > max_positions_) {
    throw std::runtime_error("mnk solver: gave up after " + std::to_string(max_positions_) +
                             " positions; " + rules_.description() + " is too large to solve exactly here");
  }
  if (cancel_ != nullptr && (searched_ & 0xFFFF) == 0 && cancel_->load()) {
    throw std::runtime_error("mnk solver: cancelled");
  }
  const Key key = key_of(board);
  const int alpha0 = alpha;
  auto it = table_.find(key);
  if (it != table_.end()) {
    const Entry e = it->second;
    if (e.bound == kExact) return e.value;
    if (e.bound == kLower && e.value >= beta) return e.value;
    if (e.bound == kUpper && e.value <= alpha) return e.value;
    if (e.bound == kLower) alpha = std::max(alpha, static_cast<int>(e.value));
    if (e.bound == kUpper) beta = std::min(beta, static_cast<int>(e.value));
    if (alpha >= beta) return e.value;
  }
  const int me = board.to_move();
  // A move that wins at once decides the position.
  for (int c : order_) {
    if (board.at(c) == 0 && board.wins_by(c, me)) return 1;
  }
  // Cells where the opponent would win next: one of them must be blocked.
  std::vector<int> forced;
  for (int c : order_) {
    if (board.at(c) == 0 && board.wins_by(c, 1 - me)) forced.push_back(c);
  }
  const std::vector<int>& candidates = forced.empty() ? order_ : forced;
  int best = -2;
  for (int c : candidates) {
    if (board.at(c) != 0) continue;
    board.play(c);  // not a win (checked above)
    const int v = board.terminal() ? 0 : -negamax(board, -beta, -alpha);
    board.undo();
    best = std::max(best, v);
    alpha = std::max(alpha, v);
    if (alpha >= beta) break;
  }
  Entry e{static_cast<int8_t>(best), kExact};
  if (best <= alpha0) e.bound = kUpper;
  else if (best >= beta) e.bound = kLower;
  table_[key] = e;
  return best;
}

int ExactSolver::value(const Board& board, const std::atomic<bool>* cancel) {
  if (board.rules().m != rules_.m || board.rules().n != rules_.n || board.rules().k != rules_.k) {
    throw std::invalid_argument("mnk solver: the board is " + board.rules().description() + ", the solver " +
                                rules_.description());
  }
  if (board.terminal()) return board.result_for(board.to_move());
  cancel_ = cancel;
  Board copy = board;
  const int v = negamax(copy, -1, 1);
  cancel_ = nullptr;
  return v;
}

std::vector<int> ExactSolver::move_values(const Board& board, const std::atomic<bool>* cancel) {
  std::vector<int> out(static_cast<size_t>(rules_.cells()), -2);
  if (board.terminal()) return out;
  Board copy = board;
  for (int c = 0; c < rules_.cells(); ++c) {
    if (!copy.legal(c)) continue;
    copy.play(c);
    out[static_cast<size_t>(c)] = copy.terminal() ? copy.result_for(board.to_move()) : -value(copy, cancel);
    copy.undo();
  }
  return out;
}

}  // namespace mnk
}  // namespace rebel
