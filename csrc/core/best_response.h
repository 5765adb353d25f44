// Exact best response, exploitability and expected value of a full-game policy.
// Exploitability = (BR_0 + BR_1) / 2, BR_i averaged over i's hands with the prior
// (the ReBeL paper's convention; equals NashConv / 2 in a zero-sum game).
#pragma once

#include <array>
#include <vector>

#include "core/game.h"
#include "core/tree.h"

namespace rebel {

struct ExploitabilityReport {
  std::array<double, 2> br_values{};   // best-response value of each player
  double exploitability = 0.0;         // (br0 + br1) / 2
  double value0 = 0.0;                 // expected value of the profile for player 0
};

// Best-response value of `player` against the opponent's part of `policy` from the tree
// root with the given root reaches (default: the prior). hand_values receives the
// per-hand counterfactual values; br_child the chosen child per (node, hand).
double best_response_value(const Game& game, const PublicTree& tree, const std::vector<double>& policy,
                           int player, std::vector<double>* hand_values = nullptr,
                           std::vector<int>* br_child = nullptr);

// Expected value for `player` when both follow `policy`.
double expected_value(const Game& game, const PublicTree& tree, const std::vector<double>& policy,
                      int player);

// Requires a tree without pseudo-leaves rooted at the game's start.
ExploitabilityReport exploitability(const Game& game, const PublicTree& tree,
                                    const std::vector<double>& policy);

// The same from any root without pseudo-leaves (a subgame played to the end), given each
// player's reach at the root (root_reach[p][h] >= 0, for instance the prior times the chance
// factors of a dealt board). Values are conditional on reaching the root: every figure is
// divided by the root's joint mass Z = sum_{h, h'} r_0(h) r_1(h') w(h, h') (1 for normalised
// independent beliefs), so they are in the game's units per hand played from there.
ExploitabilityReport exploitability_from(const Game& game, const PublicTree& tree, const std::vector<double>& policy,
                                         const std::array<std::vector<double>, 2>& root_reach);

}  // namespace rebel
