// Policy networks give a warm-start policy sigma0 for each subgame solve (ReBeL's
// InitializePolicy, Algorithm 1): at a public belief state they answer, for every hand of
// the player acting there, a distribution over that player's legal actions.
//
// Query rows use the value-net layout of core/value_net.h with row[1] (the queried player)
// set to the acting player at the public state: [0] actor, [1] actor, public features,
// both players' normalised beliefs.
// Output (A = game.num_actions(), H = game.num_hands()): out[(b * H + h) * A + a] is the
// acting player's probability of action id a holding hand h at query b; exactly 0 on the
// actions illegal at histories[b], and each (b, h) row sums to 1.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/game.h"

namespace rebel {

struct PolicyQueryBatch {
  int size = 0;                 // number of rows
  int row_size = 0;             // query_size(game)
  const float* rows = nullptr;  // size * row_size floats (layout above)
  // The public state of every row, for nets that need it (masks, tabular nets).
  std::vector<const History*> histories;
};

class PolicyNet {
 public:
  virtual ~PolicyNet() = default;
  // Writes batch.size * H * A probabilities into `out`. Must be safe to call from several
  // threads at once, as ValueNet::compute_values.
  virtual void compute_policies(const PolicyQueryBatch& batch, double* out) = 0;
  virtual std::string name() const = 0;
  // Changes whenever the answers may change (e.g. new weights installed). A solve warm-started
  // from this net may be reused while the token stays the same; 0 (the default) means
  // "unknown", and such a net's solves are never reused.
  virtual uint64_t policies_token() const { return 0; }
};

using PolicyNetPtr = std::shared_ptr<PolicyNet>;

}  // namespace rebel
