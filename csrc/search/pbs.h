// Public belief states: a public state (history) plus both players' beliefs over hands.
#pragma once

#include <vector>

#include "core/game.h"
#include "solvers/subgame_solver.h"

namespace rebel {

struct Pbs {
  History history;
  Beliefs beliefs;  // normalised, one vector per player
};

// Validates the history (legal actions) and both beliefs (length, finite, non-negative,
// positive mass), and normalises the beliefs.
Pbs make_pbs(const Game& game, History history, const Beliefs& beliefs);

// The PBS after the player to act takes `action`, which each of its hands h takes with
// probability action_probs[h] (Bayes update of that player's beliefs). Rejects illegal
// actions and actions no hand in the beliefs would take. At a public chance node
// `action_probs` must be empty: both beliefs are multiplied by the outcome's chance factors
// (game.h), which is Bayes' rule for the public card; an outcome that leaves a player no
// mass is rejected.
Pbs pbs_after(const Game& game, const Pbs& pbs, Action action, const std::vector<double>& action_probs);

// Bayes update after `player` took a public action: beliefs[h] *= P(action | h), then
// normalise. `action_probs` holds P(action | h) per hand. If no hand can take the action
// the beliefs become uniform (an off-policy action; callers decide whether to allow it).
void bayes_update(std::vector<double>* beliefs, const double* action_probs);

// The numerator of that update, beliefs[h] *= P(action | h), without normalising (a walk
// that takes several actions normalises once at its end).
void multiply_beliefs(std::vector<double>* beliefs, const double* action_probs);

// Zeroes the beliefs of the hands `possible` rules out (possible_hands: a board card they
// hold) and renormalises; a player left with no mass gets the uniform distribution over the
// possible hands (normalize_beliefs' own fallback would include impossible ones).
void keep_possible(const std::vector<char>& possible, Beliefs* beliefs);

}  // namespace rebel
