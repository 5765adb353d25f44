// Exact game values of m,n,k positions: negamax with alpha-beta pruning and a transposition
// table keyed by the two players' stone sets. For boards of at most 64 cells (tic-tac-toe,
// 4x4 k4 and 5x5 k4 are solved in well under a minute; larger boards may exceed the position
// budget, which is reported, never a hang).
#pragma once

#include <atomic>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "games/mnk_board.h"

namespace rebel {
namespace mnk {

class ExactSolver {
 public:
  // `max_positions`: positions searched (over the solver's life) before it gives up with
  // std::runtime_error; the table's memory grows with them (about 40 bytes each).
  explicit ExactSolver(const Rules& rules, long long max_positions = 200'000'000);

  // Value for the player to move with best play by both: +1 win, 0 draw, -1 loss.
  // A finished board's value is its result for the player who would move next.
  // `cancel` (may be null) is polled; when it turns true the call throws std::runtime_error.
  int value(const Board& board, const std::atomic<bool>* cancel = nullptr);
  // The value for the mover of each cell's move (-2 for an illegal cell), length m * n.
  std::vector<int> move_values(const Board& board, const std::atomic<bool>* cancel = nullptr);

  long long positions_searched() const { return searched_; }
  size_t table_size() const { return table_.size(); }

 private:
  struct Key {
    uint64_t mine, theirs;
    bool operator==(const Key& o) const { return mine == o.mine && theirs == o.theirs; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = k.mine * 0x9E3779B97F4A7C15ULL ^ (k.theirs + 0x632BE59BD9B4E019ULL + (k.mine << 6));
      h ^= h >> 31;
      return static_cast<size_t>(h * 0xBF58476D1CE4E5B9ULL);
    }
  };
  enum Bound : int8_t { kExact = 0, kLower = 1, kUpper = 2 };
  struct Entry {
    int8_t value;
    int8_t bound;
  };

  int negamax(Board& board, int alpha, int beta);
  Key key_of(const Board& board) const;

  Rules rules_;
  std::vector<int> order_;  // cells from the centre outwards: good moves first
  std::unordered_map<Key, Entry, KeyHash> table_;
  long long max_positions_;
  long long searched_ = 0;
  const std::atomic<bool>* cancel_ = nullptr;
};

}  // namespace mnk
}  // namespace rebel
