#include "nets/policy_nets.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tree_ops.h"
#include "core/value_net.h"

namespace rebel {

namespace {

void check_batch_histories(const PolicyQueryBatch& batch, const char* who) {
  if (batch.histories.size() != static_cast<size_t>(batch.size)) {
    throw std::invalid_argument(std::string(who) + ": the batch has " + std::to_string(batch.size) + " rows but " +
                                std::to_string(batch.histories.size()) + " histories");
  }
}

}  // namespace

MlpPolicyNet::MlpPolicyNet(GamePtr game, MlpWeightsPtr weights)
    : game_(std::move(game)),
      input_size_(game_ ? query_size(*game_) : 0),
      output_size_(game_ ? game_->num_hands() * game_->num_actions() : 0),
      num_actions_(game_ ? game_->num_actions() : 0) {
  if (!game_) throw std::invalid_argument("MlpPolicyNet: a game is required");
  set_weights(std::move(weights));
}

void MlpPolicyNet::check_fits(const MlpWeights& weights) const {
  const MlpShape& s = weights.shape();
  if (s.stake_column >= 0) {
    throw std::invalid_argument("policy net weights scale their outputs by a stake column (input " +
                                std::to_string(s.stake_column) + "): that is a stake-relative value net, not a policy net");
  }
  if (s.input_size == input_size_ && s.output_size == output_size_) return;
  const int H = game_->num_hands();
  std::string msg = "policy net weights have input size " + std::to_string(s.input_size) + " / output size " +
                    std::to_string(s.output_size) + "; " + game_->description() + " needs query size " +
                    std::to_string(input_size_) + " and num_hands*num_actions = " + std::to_string(H) + " x " +
                    std::to_string(num_actions_) + " = " + std::to_string(output_size_);
  if (s.input_size == input_size_ && s.output_size == H) {
    msg += " (output size num_hands: these look like value net weights)";
  }
  throw std::invalid_argument(msg);
}

void MlpPolicyNet::set_weights(MlpWeightsPtr weights) {
  if (!weights) throw std::invalid_argument("MlpPolicyNet: weights must not be null");
  check_fits(*weights);
  weights_.store(std::move(weights));
  version_.fetch_add(1);  // after the store: a solve that saw both snapshots sees a new token
}

void MlpPolicyNet::forward(const float* in, long batch, float* out) const {
  const MlpWeightsPtr w = weights();  // one snapshot for the whole batch
  w->forward(in, batch, out);
}

void MlpPolicyNet::compute_policies(const PolicyQueryBatch& batch, double* out) {
  if (batch.size <= 0) return;
  if (batch.row_size != input_size_) {
    throw std::invalid_argument("MlpPolicyNet: query rows have " + std::to_string(batch.row_size) +
                                " floats, the net expects " + std::to_string(input_size_));
  }
  check_batch_histories(batch, "MlpPolicyNet");
  const int H = game_->num_hands(), A = num_actions_;
  std::vector<float> logits(static_cast<size_t>(batch.size) * output_size_);
  forward(batch.rows, batch.size, logits.data());
  std::vector<Action> legal;
  for (int b = 0; b < batch.size; ++b) {
    const History& history = *batch.histories[b];
    if (game_->is_terminal(history)) throw std::invalid_argument("MlpPolicyNet: a query at a terminal history");
    game_->legal_actions(history, &legal);
    if (legal.empty()) throw std::invalid_argument("MlpPolicyNet: a query at a history with no legal action");
    for (int h = 0; h < H; ++h) {
      const size_t base = (static_cast<size_t>(b) * H + h) * A;
      const float* z = &logits[base];
      double* o = out + base;
      std::fill(o, o + A, 0.0);
      double top = -INFINITY;
      for (Action a : legal) top = std::max(top, static_cast<double>(z[a]));
      double total = 0.0;
      for (Action a : legal) total += (o[a] = std::exp(static_cast<double>(z[a]) - top));
      for (Action a : legal) o[a] /= total;
    }
  }
}

TabularPolicyNet::TabularPolicyNet(GamePtr game, std::shared_ptr<const PublicTree> tree, std::vector<double> policy)
    : game_(std::move(game)), tree_(std::move(tree)), policy_(std::move(policy)) {
  if (!game_ || !tree_) throw std::invalid_argument("TabularPolicyNet: a game and its full tree are required");
  check_tree_game(*game_, *tree_);
  if (!tree_->root_history().empty()) {
    throw std::invalid_argument("TabularPolicyNet needs the full game tree (its root is not the game's start)");
  }
  try {
    validate_policy(*tree_, game_->num_hands(), policy_);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("TabularPolicyNet: ") + e.what());
  }
}

void TabularPolicyNet::compute_policies(const PolicyQueryBatch& batch, double* out) {
  if (batch.size <= 0) return;
  check_batch_histories(batch, "TabularPolicyNet");
  const PublicTree& t = *tree_;
  const int H = game_->num_hands(), A = game_->num_actions();
  for (int b = 0; b < batch.size; ++b) {
    const int n = find_node(t, *batch.histories[b]);
    if (n < 0 || t.kind[n] != NodeKind::kDecision) {
      throw std::invalid_argument(std::string("TabularPolicyNet: a queried history is ") +
                                  (n < 0 ? "not in its tree" : "not a decision node"));
    }
    double* o = out + static_cast<size_t>(b) * H * A;
    std::fill(o, o + static_cast<size_t>(H) * A, 0.0);
    for (int c = t.first_child[n]; c < t.first_child[n] + t.num_children[n]; ++c) {
      for (int h = 0; h < H; ++h) o[static_cast<size_t>(h) * A + t.action[c]] = policy_[static_cast<size_t>(c) * H + h];
    }
  }
}

}  // namespace rebel
