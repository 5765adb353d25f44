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

// What the oracle returns for a solved leaf subgame.
enum class OracleValues {
  kRootMean,       // linear mean of the iterates' root values: the original ReBeL's oracle
                   // and training target, and what a search stopped at a random iteration
                   // (linear weights) realises in expectation
  kBestResponse,   // best-response values against the opponent's average policy (closer
                   // to the equilibrium values for the same iterations)
};

// For each query, solves the whole public subtree below the leaf (no depth limit) from
// the leaf PBS for `iterations` half-iterations and returns the queried player's values
// per hand (given the opponent's normalised beliefs). Small games only: the cost is that
// of a full solve per query.
class OracleNet final : public ValueNet {
 public:
  OracleNet(GamePtr game, SolverParams params, int iterations, OracleValues values = OracleValues::kRootMean);
  void compute_values(const LeafQueryBatch& batch, double* out) override;
  std::string name() const override { return "oracle"; }

 private:
  std::shared_ptr<const PublicTree> subtree(const History& history);

  GamePtr game_;
  SolverParams params_;
  int iterations_;
  OracleValues values_;
  std::mutex cache_mutex_;  // guards the subtree cache shared by solver threads
  std::map<History, std::shared_ptr<const PublicTree>> cache_;
};

}  // namespace rebel
