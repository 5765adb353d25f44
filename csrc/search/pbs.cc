#include "search/pbs.h"

#include <stdexcept>

namespace rebel {

Pbs make_pbs(const Game& game, History history, const Beliefs& beliefs) {
  Pbs pbs;
  pbs.history = std::move(history);
  const int H = game.num_hands();
  pbs.beliefs[0] = checked_beliefs(beliefs[0], H, "beliefs of player 0");
  pbs.beliefs[1] = checked_beliefs(beliefs[1], H, "beliefs of player 1");
  return pbs;
}

Pbs initial_pbs(const Game& game) { return make_pbs(game, {}, {game.hand_prior(), game.hand_prior()}); }

void bayes_update(std::vector<double>* beliefs, const double* action_probs) {
  auto& b = *beliefs;
  const int H = static_cast<int>(b.size());
  for (int h = 0; h < H; ++h) b[h] *= action_probs[h];
  normalize_beliefs(b.data(), H, b.data());
}

}  // namespace rebel
