#include "games/mnk_board.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace rebel {
namespace mnk {

void Rules::validate() const {
  const auto fail = [&](const std::string& why) {
    throw std::invalid_argument("mnk: " + why + " (m=" + std::to_string(m) + ", n=" + std::to_string(n) +
                                ", k=" + std::to_string(k) + ")");
  };
  if (m < 1 || m > kMaxSide) fail("m (rows) must be in 1.." + std::to_string(kMaxSide));
  if (n < 1 || n > kMaxSide) fail("n (columns) must be in 1.." + std::to_string(kMaxSide));
  if (k < 1) fail("k must be >= 1");
  if (k > std::max(m, n)) fail("k must be <= max(m, n): no line of k stones fits on the board");
}

std::string Rules::description() const {
  return "mnk(m=" + std::to_string(m) + ", n=" + std::to_string(n) + ", k=" + std::to_string(k) + ")";
}

std::string Rules::cell_name(int cell) const {
  if (cell < 0 || cell >= cells()) return "?";
  return std::string(1, static_cast<char>('a' + cell % n)) + std::to_string(cell / n + 1);
}

int Rules::parse_cell(const std::string& name) const {
  if (name.size() < 2) return -1;
  const int column = std::tolower(static_cast<unsigned char>(name[0])) - 'a';
  int row = 0;
  for (size_t i = 1; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i])) || i > 3) return -1;
    row = row * 10 + (name[i] - '0');
  }
  if (column < 0 || column >= n || row < 1 || row > m) return -1;
  return (row - 1) * n + column;
}

Board::Board(const Rules& rules) : rules_(rules) {
  rules_.validate();
  cells_.assign(static_cast<size_t>(rules_.cells()), 0);
}

int Board::result_for(int player) const {
  switch (outcome_) {
    case Outcome::kWin0: return player == 0 ? 1 : -1;
    case Outcome::kWin1: return player == 1 ? 1 : -1;
    default: return 0;
  }
}

bool Board::legal(int cell) const {
  return !terminal() && cell >= 0 && cell < rules_.cells() && cells_[static_cast<size_t>(cell)] == 0;
}

void Board::legal_moves(std::vector<int>* out) const {
  out->clear();
  if (terminal()) return;
  for (int c = 0; c < rules_.cells(); ++c)
    if (cells_[static_cast<size_t>(c)] == 0) out->push_back(c);
}

int Board::line_length(int cell, int dr, int dc, int8_t stone) const {
  // Stones of `stone` in a row from `cell` (exclusive) in direction (dr, dc), at most k - 1.
  int r = cell / rules_.n + dr, c = cell % rules_.n + dc, count = 0;
  while (count < rules_.k - 1 && r >= 0 && r < rules_.m && c >= 0 && c < rules_.n &&
         cells_[static_cast<size_t>(r * rules_.n + c)] == stone) {
    ++count;
    r += dr;
    c += dc;
  }
  return count;
}

bool Board::wins_by(int cell, int player) const {
  const int8_t stone = static_cast<int8_t>(player + 1);
  static constexpr int kDirections[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
  for (const auto& d : kDirections) {
    if (1 + line_length(cell, d[0], d[1], stone) + line_length(cell, -d[0], -d[1], stone) >= rules_.k) return true;
  }
  return false;
}

void Board::play(int cell) {
  if (terminal()) throw std::invalid_argument("mnk: the game is over; no move can be played");
  if (cell < 0 || cell >= rules_.cells()) {
    throw std::invalid_argument("mnk: cell " + std::to_string(cell) + " is off the board (0.." +
                                std::to_string(rules_.cells() - 1) + ")");
  }
  if (cells_[static_cast<size_t>(cell)] != 0) {
    throw std::invalid_argument("mnk: cell " + rules_.cell_name(cell) + " is already occupied");
  }
  const bool win = wins_by(cell);
  cells_[static_cast<size_t>(cell)] = static_cast<int8_t>(to_move() + 1);
  if (win) outcome_ = to_move() == 0 ? Outcome::kWin0 : Outcome::kWin1;
  history_.push_back(cell);
  ++moves_made_;
  if (!win && moves_made_ == rules_.cells()) outcome_ = Outcome::kDraw;
}

void Board::undo() {
  if (history_.empty()) throw std::invalid_argument("mnk: no move to take back");
  cells_[static_cast<size_t>(history_.back())] = 0;
  history_.pop_back();
  --moves_made_;
  outcome_ = Outcome::kOngoing;
}

std::string Board::to_string() const {
  std::string s;
  for (int r = rules_.m - 1; r >= 0; --r) {
    for (int c = 0; c < rules_.n; ++c) s += ".XO"[cells_[static_cast<size_t>(r * rules_.n + c)]];
    s += '\n';
  }
  return s;
}

std::vector<std::vector<int>> symmetries(const Rules& rules) {
  rules.validate();
  const int m = rules.m, n = rules.n;
  // Each symmetry maps (row, column) to a (row, column) of a board of the same shape.
  std::vector<std::vector<int>> out;
  const auto add = [&](auto&& f) {
    std::vector<int> perm(static_cast<size_t>(m * n));
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) {
        const std::pair<int, int> to = f(r, c);
        perm[static_cast<size_t>(r * n + c)] = to.first * n + to.second;
      }
    // Thin boards have fewer distinct symmetries (a mirror of a 1 x n strip is the identity).
    if (std::find(out.begin(), out.end(), perm) == out.end()) out.push_back(std::move(perm));
  };
  add([&](int r, int c) { return std::make_pair(r, c); });
  add([&](int r, int c) { return std::make_pair(r, n - 1 - c); });          // mirror left-right
  add([&](int r, int c) { return std::make_pair(m - 1 - r, c); });          // mirror top-bottom
  add([&](int r, int c) { return std::make_pair(m - 1 - r, n - 1 - c); });  // half turn
  if (m == n) {
    add([&](int r, int c) { return std::make_pair(c, r); });                  // transpose
    add([&](int r, int c) { return std::make_pair(n - 1 - c, m - 1 - r); });  // anti-transpose
    add([&](int r, int c) { return std::make_pair(c, m - 1 - r); });          // quarter turn
    add([&](int r, int c) { return std::make_pair(n - 1 - c, r); });          // three-quarter turn
  }
  return out;
}

}  // namespace mnk
}  // namespace rebel
