// The warm-start policy sigma0 of a subgame from a policy net (ReBeL's InitializePolicy).
#pragma once

#include <vector>

#include "core/game.h"
#include "core/policy_net.h"
#include "core/tree.h"
#include "solvers/subgame_solver.h"

namespace rebel {

// sigma0 over `subgame` in SubgameSolver's policy layout (per child of a decision node, per
// hand). Definition: top-down, one batched net call per depth level (decision nodes only),
// each decision node n is queried at its PBS under sigma0 so far: both players' reaches
// from the normalised `root_beliefs` through the sigma0 rows already set above n (chance
// nodes multiply by their outcomes' chance factors, as compute_reach does), normalised; the
// query row's [0] and [1] are the player acting at n. Every decision node is queried: a
// player who reaches n with mass 0 has uniform beliefs there. The net's action ids map to children by
// subgame.action[child]. Throws std::invalid_argument on bad beliefs or a net answer that
// is not a distribution (non-finite, negative, or not summing to 1 within 1e-6).
std::vector<double> policy_net_start(const Game& game, const PublicTree& subgame, const Beliefs& root_beliefs,
                                     PolicyNet& net);

}  // namespace rebel
