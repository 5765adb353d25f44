// Vectorised passes over a public tree shared by the solvers, best response and search.
// Arrays are [num_nodes * num_hands], policies use the child-indexed layout of tree.h.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/game.h"
#include "core/tree.h"
#include "util/simd.h"

namespace rebel {

// How a node looks to `player`, the player whose reach or values a pass computes (the
// player a solver updates, or the best-responding player). This is the one place that
// classifies nodes: the passes below and the solvers ask node_role / decision_role and
// treat every internal node where `player` does not act (the opponent's and public chance
// nodes) through reach_where_not_acting and value_where_not_acting.
enum class NodeRole : uint8_t {
  kOwn,         // `player` decides: its policy (or best response) applies
  kOpponent,    // the other player decides: `player`'s reach passes through unchanged and the
                // node's value is the sum of its children's (the opponent's reach is already
                // inside the leaf values)
  kChance,      // public chance: each child's reach is the node's times the outcome's chance
                // factors, and the node's value the factor-weighted sum of the children's
                // (game.h)
  kTerminal,    // values from the game (fill_terminal_values)
  kPseudoLeaf,  // values from the value net
};

// The role of a node of tree.internal_nodes (no lookup of its kind: for the hot loops).
inline NodeRole decision_role(const PublicTree& tree, int n, int player) {
  const int acting = tree.player[n];
  if (acting == player) return NodeRole::kOwn;
  return acting == kChancePlayer ? NodeRole::kChance : NodeRole::kOpponent;
}

// The role of any node.
inline NodeRole node_role(const PublicTree& tree, int n, int player) {
  switch (tree.kind[n]) {
    case NodeKind::kTerminal: return NodeRole::kTerminal;
    case NodeKind::kPseudoLeaf: return NodeRole::kPseudoLeaf;
    case NodeKind::kDecision:
    case NodeKind::kChance: break;
  }
  return decision_role(tree, n, player);
}

// Below an internal node where `player` does not act, `player`'s reach at each of its
// `num_children` children from its reach at the node. `node` points at the node's H
// entries, `children` at its first child's (children are contiguous, H entries each).
// `factors` is tree.chance_factors_at(n): null at an opponent's node (the reach passes
// through), the children's chance factors at a chance node. T is double (reaches) or
// uint16_t (the off-path modes' reach orders, which chance leaves unchanged: pass null).
// kHands > 0 fixes the hand count at compile time (the caller's unrolled variants); always
// inlined, so it takes the instruction set of the SIMD clone that calls it.
template <int kHands = 0, typename T>
REBEL_ALWAYS_INLINE void reach_where_not_acting(int hands, int num_children, const T* node, T* children,
                                                const double* factors = nullptr) {
  const int H = kHands > 0 ? kHands : hands;
  if (factors == nullptr) {
    if constexpr (kHands > 0) {
      // A fixed small count: plain register copies rather than a memmove call per child.
      for (int k = 0; k < num_children; ++k) {
        T* c = children + static_cast<size_t>(k) * H;
        for (int h = 0; h < kHands; ++h) c[h] = node[h];
      }
    } else {
      for (int k = 0; k < num_children; ++k) std::copy(node, node + H, children + static_cast<size_t>(k) * H);
    }
    return;
  }
  for (int k = 0; k < num_children; ++k) {
    const double* f = factors + static_cast<size_t>(k) * H;
    T* c = children + static_cast<size_t>(k) * H;
    for (int h = 0; h < H; ++h) c[h] = static_cast<T>(node[h] * f[h]);
  }
}

// The value for `player` of an internal node where it does not act (the sum of the
// children's values at an opponent's node, weighted by the chance factors at a chance
// node), written to `value` (H entries). `child_values` points at the first child's H
// entries, `factors` as for reach_where_not_acting. `counts(k)` says whether child k
// contributes (the off-path passes leave out children reached at a higher order); children
// are summed in order from 0.
template <int kHands = 0, typename Counts>
REBEL_ALWAYS_INLINE void value_where_not_acting(int hands, int num_children, const double* __restrict child_values,
                                                double* __restrict value, const double* __restrict factors,
                                                Counts counts) {
  const int H = kHands > 0 ? kHands : hands;
  for (int h = 0; h < H; ++h) value[h] = 0.0;
  for (int k = 0; k < num_children; ++k) {
    if (!counts(k)) continue;
    const double* vc = child_values + static_cast<size_t>(k) * H;
    if (factors == nullptr) {
      for (int h = 0; h < H; ++h) value[h] += vc[h];
    } else {
      const double* f = factors + static_cast<size_t>(k) * H;
      for (int h = 0; h < H; ++h) value[h] += f[h] * vc[h];
    }
  }
}

template <int kHands = 0>
REBEL_ALWAYS_INLINE void value_where_not_acting(int hands, int num_children, const double* __restrict child_values,
                                                double* __restrict value, const double* __restrict factors = nullptr) {
  value_where_not_acting<kHands>(hands, num_children, child_values, value, factors, [](int) { return true; });
}

// reach[n*H + h] = root_reach[h] * product of `player`'s policy along the path to n.
void compute_reach(const PublicTree& tree, int H, const std::vector<double>& policy, int player,
                   const double* root_reach, std::vector<double>* reach);

// Writes the terminal values of `player` (see game.h) into values[n*H ...] for every
// terminal node n, using the opponent's reach at that node.
void fill_terminal_values(const Game& game, const PublicTree& tree, int player,
                          const std::vector<double>& opp_reach, std::vector<double>* values);

// Bottom-up pass: `player` follows `policy`, the opponent's reach is already inside the
// leaf values, so opponent nodes sum their children. Leaves must be filled beforehand.
void backup_policy_values(const PublicTree& tree, int H, const std::vector<double>& policy,
                          int player, std::vector<double>* values);

// Bottom-up pass where `player` best-responds (per hand). If best_child is non-null it
// receives, for each of `player`'s decision nodes n and hand h, the chosen child at
// (*best_child)[n*H + h] (ties: the lowest action id).
void backup_best_response(const PublicTree& tree, int H, int player, std::vector<double>* values,
                          std::vector<int>* best_child);

// Normalises a reach-weighted policy sum into a policy (uniform where the sum is zero).
void normalize_policy(const PublicTree& tree, int H, const std::vector<double>& sum,
                      std::vector<double>* policy, int only_player = -1);

// Checks that `policy` has the right size, finite non-negative entries and sums to 1
// (within 1e-6) at every decision node and hand; throws std::invalid_argument otherwise.
void validate_policy(const PublicTree& tree, int H, const std::vector<double>& policy);

}  // namespace rebel
