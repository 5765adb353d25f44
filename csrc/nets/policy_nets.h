// Policy nets (core/policy_net.h): the native MLP policy net and a tabular reference net.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/game.h"
#include "core/policy_net.h"
#include "core/tree.h"
#include "nets/mlp.h"

namespace rebel {

// The MLP of MlpValueNet (same weights file format) read as a policy net: input
// query_size(game), output num_hands * num_actions logits laid out [hand][action]
// row-major. The answer is the softmax of each hand's logits over the actions legal at the
// query's history (max-subtracted, in double); illegal actions get exactly 0. set_weights()
// swaps the snapshot atomically, as MlpValueNet's.
class MlpPolicyNet final : public PolicyNet {
 public:
  // Throws std::invalid_argument naming the sizes if the weights do not fit the game.
  MlpPolicyNet(GamePtr game, MlpWeightsPtr weights);

  void compute_policies(const PolicyQueryBatch& batch, double* out) override;
  std::string name() const override { return "mlp"; }
  uint64_t policies_token() const override { return version_.load(); }

  // Raw logits out[b][num_hands * num_actions] from rows in[b][query_size], one snapshot.
  void forward(const float* in, long batch, float* out) const;

  MlpWeightsPtr weights() const { return weights_.load(); }
  void set_weights(MlpWeightsPtr weights);

  int input_size() const { return input_size_; }
  int output_size() const { return output_size_; }
  int num_actions() const { return num_actions_; }
  const Game& game() const { return *game_; }

 private:
  void check_fits(const MlpWeights& weights) const;

  GamePtr game_;
  int input_size_, output_size_, num_actions_;
  AtomicSnapshot<MlpWeights> weights_;
  std::atomic<uint64_t> version_{0};  // set_weights calls (policies_token)
};

// A fixed full-game policy (the solver layout of SubgameSolver::current_policy over `tree`,
// which must be the game's full public tree) answered at every queried public state,
// whatever the beliefs: a reference net (e.g. an exact equilibrium) for tests and for the
// "oracle policy" baseline. The constructor validates the policy (size, finite,
// non-negative, rows summing to 1 within 1e-6); a query at a history outside the tree or
// at a non-decision node throws std::invalid_argument.
class TabularPolicyNet final : public PolicyNet {
 public:
  TabularPolicyNet(GamePtr game, std::shared_ptr<const PublicTree> tree, std::vector<double> policy);

  void compute_policies(const PolicyQueryBatch& batch, double* out) override;
  std::string name() const override { return "tabular"; }
  uint64_t policies_token() const override { return 1; }  // one fixed policy

  const PublicTree& tree() const { return *tree_; }
  const std::vector<double>& policy() const { return policy_; }

 private:
  GamePtr game_;
  std::shared_ptr<const PublicTree> tree_;
  std::vector<double> policy_;
};

}  // namespace rebel
