// Value nets that need no training: the zero net and the oracle (exact values by
// solving the rest of the game below the leaf with the tabular solver).
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "core/solver.h"
#include "core/value_net.h"

namespace rebel {

class ZeroNet final : public ValueNet {
 public:
  explicit ZeroNet(int num_hands) : num_hands_(num_hands) {}
  void compute_values(const LeafQueryBatch& batch, double* out) override;
  std::string name() const override { return "zero"; }

 private:
  int num_hands_;
};

// For each query, solves the whole public subtree below the leaf (no depth limit) from
// the leaf PBS for `iterations` half-iterations and returns the averaged root values of
// the queried player. Small games only: the cost is that of a full solve per query.
class OracleNet final : public ValueNet {
 public:
  OracleNet(GamePtr game, SolverParams params, int iterations);
  void compute_values(const LeafQueryBatch& batch, double* out) override;
  std::string name() const override { return "oracle"; }

 private:
  std::shared_ptr<const PublicTree> subtree(const History& history);

  GamePtr game_;
  SolverParams params_;
  int iterations_;
  std::mutex cache_mutex_;  // guards the subtree cache shared by solver threads
  std::map<History, std::shared_ptr<const PublicTree>> cache_;
};

}  // namespace rebel
