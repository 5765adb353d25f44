#include "search/nets.h"

#include <algorithm>
#include <stdexcept>

namespace rebel {

void ZeroNet::compute_values(const LeafQueryBatch& batch, double* out) {
  std::fill(out, out + static_cast<size_t>(batch.size) * num_hands_, 0.0);
}

OracleNet::OracleNet(GamePtr game, SolverParams params, int iterations)
    : game_(std::move(game)), params_(params), iterations_(iterations) {
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
    SubgameSolver solver(game_, subtree(*batch.histories[i]), beliefs, params_, nullptr);
    solver.run(iterations_);
    const auto& v = solver.root_values(batch.queried_player[i]);
    std::copy(v.begin(), v.end(), out + static_cast<size_t>(i) * H);
  }
}

}  // namespace rebel
