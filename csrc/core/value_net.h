// Value networks give the values of pseudo-leaf public belief states to the subgame
// solver. All pseudo-leaves of one solver iteration go to the net as one batch, except
// those the opponent reaches with mass exactly 0 (their values are 0 whatever the net says).
//
// Query row layout (float, length query_size(game)):
//   [0]                    acting player at the leaf
//   [1]                    queried player (whose values are asked)
//   [2, 2+F)               game.public_features(leaf history)
//   [2+F, 2+F+H)           normalised beliefs of player 0
//   [2+F+H, 2+F+2H)        normalised beliefs of player 1
// Output row (length H): value of each hand of the queried player given the opponent's
// *normalised* beliefs; the solver multiplies by the opponent's reach mass.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/game.h"

namespace rebel {

// The public part of a query row (layout above): [0] the acting player, [2, 2+F) the
// public features of `history`. [1], the queried player, is the caller's (write_query_row).
inline void write_query_public(const Game& game, const History& history, int actor, float* row) {
  row[0] = static_cast<float>(actor);
  game.public_features(history, row + 2);
}

// The beliefs part of a query row: both players' normalised beliefs, H entries each.
inline void write_query_beliefs(const Game& game, const double* beliefs0, const double* beliefs1, float* row) {
  const int F = game.feature_size(), H = game.num_hands();
  for (int h = 0; h < H; ++h) row[2 + F + h] = static_cast<float>(beliefs0[h]);
  for (int h = 0; h < H; ++h) row[2 + F + H + h] = static_cast<float>(beliefs1[h]);
}

// A whole query row: what `queried` player's values at the PBS (history, beliefs) are asked with.
inline void write_query_row(const Game& game, const History& history, int actor, int queried,
                            const double* beliefs0, const double* beliefs1, float* row) {
  write_query_public(game, history, actor, row);
  row[1] = static_cast<float>(queried);
  write_query_beliefs(game, beliefs0, beliefs1, row);
}

struct LeafQueryBatch {
  int size = 0;                     // number of rows
  int row_size = 0;                 // query_size(game)
  const float* rows = nullptr;      // size * row_size floats (layout above)
  // Structured view of the same queries, for nets that need the public state itself
  // (e.g. the oracle). Beliefs are normalised, length num_hands each.
  std::vector<const History*> histories;
  std::vector<int> queried_player;
  std::vector<const double*> beliefs0, beliefs1;
};

class ValueNet {
 public:
  virtual ~ValueNet() = default;
  // Writes batch.size * num_hands values into `out`. Must be safe to call from several
  // solver threads at once (implementations keep no per-call mutable shared state).
  virtual void compute_values(const LeafQueryBatch& batch, double* out) = 0;
  virtual std::string name() const = 0;
  // Which function the net computes, for caches of whole solves (SelfPlayGenerator): two
  // reads that return the same non-zero token bracket values that every query would give
  // alike. 0 (the default) promises nothing, and nothing computed with the net is reused.
  virtual uint64_t values_token() const { return 0; }
};

using ValueNetPtr = std::shared_ptr<ValueNet>;

}  // namespace rebel
