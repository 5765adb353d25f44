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

#include <memory>
#include <vector>

#include "core/game.h"

namespace rebel {

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
};

using ValueNetPtr = std::shared_ptr<ValueNet>;

}  // namespace rebel
