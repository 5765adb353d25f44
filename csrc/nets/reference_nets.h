// Value nets that need no training: the zero net and the oracle (exact values by
// solving the rest of the game below the leaf with the tabular solver).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/value_net.h"
#include "solvers/subgame_solver.h"

namespace rebel {

class ZeroNet final : public ValueNet {
 public:
  explicit ZeroNet(int num_hands) : num_hands_(num_hands) {}
  void compute_values(const LeafQueryBatch& batch, double* out) override;
  std::string name() const override { return "zero"; }
  uint64_t values_token() const override { return 1; }  // one function, forever

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
  uint64_t values_token() const override { return 1; }  // deterministic solves of fixed settings

 private:
  std::shared_ptr<const PublicTree> subtree(const History& history);

  GamePtr game_;
  SolverParams params_;
  int iterations_;
  OracleValues values_;
  std::mutex cache_mutex_;  // guards the subtree cache shared by solver threads
  std::map<History, std::shared_ptr<const PublicTree>> cache_;
};

// The shape of a PerturbedNet's error.
enum class LeafErrorKind {
  kRandom,  // a fixed random vector per public state and queried player (independent of the
            // beliefs): a fixed imperfect net, not noise that averages out over iterations
  kBias,    // +delta on every hand of player 0, -delta on every hand of player 1: a
            // systematic error that favours player 0 at every leaf
  kNoise,   // a random vector per query row (beliefs included): the same query always gets
            // the same answer, but nearby beliefs get unrelated errors
};

// Parses "random", "bias", "noise"; throws std::invalid_argument.
LeafErrorKind parse_leaf_error_kind(const std::string& name);
std::string leaf_error_kind_name(LeafErrorKind kind);

// A base net's values plus an error of max norm exactly `delta` over the hands of every
// query (the hand with the largest error gets +-delta; the others less, for kRandom and
// kNoise). The error is a deterministic function of the query row and `seed`, so the same
// leaf PBS always gets the same answer. delta = 0 returns the base net's values unchanged.
// Used to test the safe-search bound (exploitability against leaf-value error).
class PerturbedNet final : public ValueNet {
 public:
  PerturbedNet(ValueNetPtr base, int num_hands, int feature_size, double delta, LeafErrorKind kind,
               uint64_t seed);
  void compute_values(const LeafQueryBatch& batch, double* out) override;
  std::string name() const override;

  // The error added to a query row's values (num_hands entries).
  void error(const float* row, double* out) const;

 private:
  ValueNetPtr base_;
  int num_hands_, feature_size_;
  double delta_;
  LeafErrorKind kind_;
  uint64_t seed_;
};

}  // namespace rebel
