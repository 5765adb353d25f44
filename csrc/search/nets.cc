#include "search/nets.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "core/tree_ops.h"

namespace rebel {

void ZeroNet::compute_values(const LeafQueryBatch& batch, double* out) {
  std::fill(out, out + static_cast<size_t>(batch.size) * num_hands_, 0.0);
}

OracleNet::OracleNet(GamePtr game, SolverParams params, int iterations, OracleValues values)
    : game_(std::move(game)), params_(params), iterations_(iterations), values_(values) {
  if (iterations < 1) throw std::invalid_argument("oracle net: iterations must be >= 1");
}

std::shared_ptr<const PublicTree> OracleNet::subtree(const History& history) {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  auto& slot = cache_[history];
  if (!slot) slot = std::make_shared<const PublicTree>(build_tree(*game_, history, -1));
  return slot;
}

void OracleNet::compute_values(const LeafQueryBatch& batch, double* out) {
  const int H = game_->num_hands();
  if (static_cast<int>(batch.histories.size()) != batch.size) {
    throw std::invalid_argument("oracle net needs the structured view of the queries (histories, beliefs)");
  }
  for (int i = 0; i < batch.size; ++i) {
    Beliefs beliefs{std::vector<double>(batch.beliefs0[i], batch.beliefs0[i] + H),
                    std::vector<double>(batch.beliefs1[i], batch.beliefs1[i] + H)};
    const auto tree = subtree(*batch.histories[i]);
    SubgameSolver solver(game_, tree, beliefs, params_, nullptr);
    solver.run(iterations_);
    const int player = batch.queried_player[i];
    if (values_ == OracleValues::kRootMean) {
      const auto& v = solver.root_values(player);
      std::copy(v.begin(), v.end(), out + static_cast<size_t>(i) * H);
      continue;
    }
    // Best-response values of the queried player against the opponent's average policy,
    // the opponent's reach starting from its normalised beliefs. These are the values a
    // PBS value function needs: hands the average policy never plays (zero belief) still
    // get the value they could obtain, so the search above can move mass towards them.
    const auto& policy = solver.average_policy();
    std::vector<double> opp_reach, values;
    std::vector<int> best_child;
    compute_reach(*tree, H, policy, 1 - player, beliefs[1 - player].data(), &opp_reach);
    fill_terminal_values(*game_, *tree, player, opp_reach, &values);
    backup_best_response(*tree, H, player, &values, &best_child);
    std::copy(values.begin(), values.begin() + H, out + static_cast<size_t>(i) * H);
  }
}

}  // namespace rebel
