#include "search/pbs.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rebel {

Pbs make_pbs(const Game& game, History history, const Beliefs& beliefs) {
  History prefix;
  std::vector<Action> legal;
  for (Action a : history) {
    if (game.is_terminal(prefix)) throw std::invalid_argument("PBS history continues past a terminal state");
    game.legal_actions(prefix, &legal);
    if (std::find(legal.begin(), legal.end(), a) == legal.end()) {
      throw std::invalid_argument("PBS history: action " + std::to_string(a) + " is not legal after " +
                                  std::to_string(prefix.size()) + " actions");
    }
    prefix.push_back(a);
  }
  Pbs pbs;
  pbs.history = std::move(history);
  const int H = game.num_hands();
  pbs.beliefs[0] = checked_beliefs(beliefs[0], H, "beliefs of player 0");
  pbs.beliefs[1] = checked_beliefs(beliefs[1], H, "beliefs of player 1");
  return pbs;
}

Pbs pbs_after(const Game& game, const Pbs& pbs, Action action, const std::vector<double>& action_probs) {
  const int H = game.num_hands();
  if (game.is_terminal(pbs.history)) throw std::invalid_argument("no action follows a terminal PBS");
  if (game.player_to_act(pbs.history) == kChancePlayer) {
    if (!action_probs.empty()) {
      throw std::invalid_argument("at a chance node the outcome updates both beliefs by the game's chance factors: "
                                  "pass no action_probs");
    }
    std::vector<Action> legal;
    game.legal_actions(pbs.history, &legal);
    if (std::find(legal.begin(), legal.end(), action) == legal.end()) {
      throw std::invalid_argument("chance outcome " + std::to_string(action) + " is not possible here");
    }
    std::vector<double> factors(H);
    game.chance_factors(pbs.history, action, factors.data());
    Beliefs next = pbs.beliefs;
    for (int p = 0; p < 2; ++p) {
      multiply_beliefs(&next[p], factors.data());
      double mass = 0.0;
      for (double b : next[p]) mass += b;
      if (!(mass > 0.0)) {
        throw std::invalid_argument("chance outcome " + std::to_string(action) + " is impossible under the beliefs of player " +
                                    std::to_string(p));
      }
    }
    History history = pbs.history;
    history.push_back(action);
    return make_pbs(game, std::move(history), next);
  }
  if (static_cast<int>(action_probs.size()) != H) {
    throw std::invalid_argument("action_probs has " + std::to_string(action_probs.size()) + " entries, expected " +
                                std::to_string(H));
  }
  const int actor = game.player_to_act(pbs.history);
  Beliefs next = pbs.beliefs;
  double mass = 0.0;
  for (int h = 0; h < H; ++h) {
    if (!(action_probs[h] >= 0.0 && action_probs[h] <= 1.0)) {
      throw std::invalid_argument("action_probs must lie in [0, 1]");
    }
    next[actor][h] *= action_probs[h];
    mass += next[actor][h];
  }
  if (!(mass > 0.0)) throw std::invalid_argument("the action has probability 0 under the acting player's beliefs");
  History history = pbs.history;
  history.push_back(action);
  return make_pbs(game, std::move(history), next);
}

void multiply_beliefs(std::vector<double>* beliefs, const double* action_probs) {
  for (size_t h = 0; h < beliefs->size(); ++h) (*beliefs)[h] *= action_probs[h];
}

void keep_possible(const std::vector<char>& possible, Beliefs* beliefs) {
  for (auto& b : *beliefs) {
    const size_t H = b.size();
    double mass = 0.0;
    for (size_t h = 0; h < H; ++h) mass += (b[h] = possible[h] ? b[h] : 0.0);
    if (!(mass > 0.0)) {
      for (size_t h = 0; h < H; ++h) mass += (b[h] = possible[h] ? 1.0 : 0.0);
    }
    for (size_t h = 0; h < H; ++h) b[h] /= mass;
  }
}

void bayes_update(std::vector<double>* beliefs, const double* action_probs) {
  multiply_beliefs(beliefs, action_probs);
  normalize_beliefs(beliefs->data(), static_cast<int>(beliefs->size()), beliefs->data());
}

}  // namespace rebel
