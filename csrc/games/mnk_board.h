// m,n,k games (tic-tac-toe = 3,3,3; Gomoku-like 15,15,5): two players alternately place a
// stone on an empty cell of an m x n board (m rows, n columns); the first to have k or more
// stones in a row, column or diagonal wins; a full board without a line is a draw.
// Player 0 moves first. Cells are numbered row-major: cell = row * n + column.
//
// This is the one implementation of the rules: the perfect-information engine (exact
// solver, MCTS) and the public-belief-state game "mnk" both use it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace rebel {
namespace mnk {

// Boards up to 19 x 19 (Go's board); k >= 1 and k <= max(m, n).
constexpr int kMaxSide = 19;
constexpr int kMaxCells = kMaxSide * kMaxSide;

struct Rules {
  int m = 3;  // rows
  int n = 3;  // columns
  int k = 3;  // stones in a row to win

  int cells() const { return m * n; }
  // Throws std::invalid_argument naming the problem.
  void validate() const;
  std::string description() const;  // e.g. "mnk(m=3, n=3, k=3)"
  // Cell name: column letter and row number, e.g. "a1" (row 0, column 0), "c2".
  std::string cell_name(int cell) const;
  // Inverse of cell_name (case-insensitive); -1 when `name` is not a cell of this board.
  int parse_cell(const std::string& name) const;
};

// Game result from player 0's point of view.
enum class Outcome : int8_t { kOngoing = 0, kWin0 = 1, kWin1 = 2, kDraw = 3 };

class Board {
 public:
  explicit Board(const Rules& rules);

  const Rules& rules() const { return rules_; }
  // 0 = empty, 1 = player 0's stone, 2 = player 1's stone.
  int8_t at(int cell) const { return cells_[static_cast<size_t>(cell)]; }
  const std::vector<int8_t>& cells() const { return cells_; }
  int to_move() const { return moves_made_ % 2; }
  int moves_made() const { return moves_made_; }
  int last_move() const { return history_.empty() ? -1 : history_.back(); }
  const std::vector<int>& history() const { return history_; }
  Outcome outcome() const { return outcome_; }
  bool terminal() const { return outcome_ != Outcome::kOngoing; }
  // +1 / -1 / 0 for `player` at a terminal board (0 while ongoing).
  int result_for(int player) const;

  bool legal(int cell) const;
  void legal_moves(std::vector<int>* out) const;
  // Places the mover's stone; std::invalid_argument for an occupied or out-of-range cell or
  // a finished game. The win test looks only at the four lines through `cell`: O(k).
  void play(int cell);
  // Takes back the last move (the solver's search uses it).
  void undo();
  // Whether `player` (default: the one to move) would complete a line by a stone on the
  // empty `cell`.
  bool wins_by(int cell) const { return wins_by(cell, to_move()); }
  bool wins_by(int cell, int player) const;

  std::string to_string() const;  // rows from the top, 'X' = player 0, 'O' = player 1

 private:
  int line_length(int cell, int dr, int dc, int8_t stone) const;

  Rules rules_;
  std::vector<int8_t> cells_;
  std::vector<int> history_;
  int moves_made_ = 0;
  Outcome outcome_ = Outcome::kOngoing;
};

// The board's symmetries as cell permutations: perm[s][cell] is where `cell` goes under
// symmetry s (s = 0 is the identity), each distinct permutation once: 8 for a square board
// (rotations and reflections), 4 otherwise (identity, the two mirror images, the half
// turn), fewer on boards one cell thin.
std::vector<std::vector<int>> symmetries(const Rules& rules);

}  // namespace mnk
}  // namespace rebel
