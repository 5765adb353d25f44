#include "core/tree_ops.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace rebel {

void compute_reach(const PublicTree& tree, int H, const std::vector<double>& policy, int player,
                   const double* root_reach, std::vector<double>* reach_out) {
  auto& reach = *reach_out;
  reach.resize(static_cast<size_t>(tree.size()) * H);
  for (int h = 0; h < H; ++h) reach[h] = root_reach[h];
  for (int n : tree.internal_nodes) {
    const double* r = &reach[static_cast<size_t>(n) * H];
    const int begin = tree.first_child[n], end = begin + tree.num_children[n];
    if (decision_role(tree, n, player) != NodeRole::kOwn) {
      reach_where_not_acting(H, tree.num_children[n], r, &reach[static_cast<size_t>(begin) * H],
                             tree.chance_factors_at(n));
      continue;
    }
    for (int c = begin; c < end; ++c) {
      double* rc = &reach[static_cast<size_t>(c) * H];
      const double* p = &policy[static_cast<size_t>(c) * H];
      for (int h = 0; h < H; ++h) rc[h] = r[h] * p[h];
    }
  }
}

void fill_terminal_values(const Game& game, const PublicTree& tree, int player,
                          const std::vector<double>& opp_reach, std::vector<double>* values) {
  const int H = game.num_hands();
  values->resize(static_cast<size_t>(tree.size()) * H);
  game.terminal_values_batch(tree, player, opp_reach.data(), values->data());
}

void backup_policy_values(const PublicTree& tree, int H, const std::vector<double>& policy,
                          int player, std::vector<double>* values_out) {
  auto& values = *values_out;
  for (auto it = tree.internal_nodes.rbegin(); it != tree.internal_nodes.rend(); ++it) {
    const int n = *it;
    double* v = &values[static_cast<size_t>(n) * H];
    const int begin = tree.first_child[n], end = begin + tree.num_children[n];
    if (decision_role(tree, n, player) != NodeRole::kOwn) {
      value_where_not_acting(H, tree.num_children[n], &values[static_cast<size_t>(begin) * H], v,
                             tree.chance_factors_at(n));
      continue;
    }
    for (int h = 0; h < H; ++h) v[h] = 0.0;
    for (int c = begin; c < end; ++c) {
      const double* vc = &values[static_cast<size_t>(c) * H];
      const double* p = &policy[static_cast<size_t>(c) * H];
      for (int h = 0; h < H; ++h) v[h] += p[h] * vc[h];
    }
  }
}

void backup_best_response(const PublicTree& tree, int H, int player, std::vector<double>* values_out,
                          std::vector<int>* best_child) {
  auto& values = *values_out;
  if (best_child) best_child->assign(static_cast<size_t>(tree.size()) * H, -1);
  for (auto it = tree.internal_nodes.rbegin(); it != tree.internal_nodes.rend(); ++it) {
    const int n = *it;
    double* v = &values[static_cast<size_t>(n) * H];
    const int begin = tree.first_child[n], end = begin + tree.num_children[n];
    const double* first = &values[static_cast<size_t>(begin) * H];
    if (decision_role(tree, n, player) != NodeRole::kOwn) {
      value_where_not_acting(H, tree.num_children[n], first, v, tree.chance_factors_at(n));
      continue;
    }
    for (int h = 0; h < H; ++h) v[h] = first[h];
    int* best = best_child ? &(*best_child)[static_cast<size_t>(n) * H] : nullptr;
    if (best) for (int h = 0; h < H; ++h) best[h] = begin;
    for (int c = begin + 1; c < end; ++c) {
      const double* vc = &values[static_cast<size_t>(c) * H];
      for (int h = 0; h < H; ++h) {
        if (vc[h] > v[h]) {
          v[h] = vc[h];
          if (best) best[h] = c;
        }
      }
    }
  }
}

void normalize_policy(const PublicTree& tree, int H, const std::vector<double>& sum,
                      std::vector<double>* policy_out, int only_player) {
  auto& policy = *policy_out;
  policy.resize(sum.size());
  for (int n : tree.decision_nodes) {
    if (only_player >= 0 && tree.player[n] != only_player) continue;
    const int begin = tree.first_child[n], end = begin + tree.num_children[n];
    for (int h = 0; h < H; ++h) {
      double total = 0.0;
      for (int c = begin; c < end; ++c) total += sum[static_cast<size_t>(c) * H + h];
      if (total > 0.0) {
        for (int c = begin; c < end; ++c) policy[static_cast<size_t>(c) * H + h] = sum[static_cast<size_t>(c) * H + h] / total;
      } else {
        const double u = 1.0 / (end - begin);
        for (int c = begin; c < end; ++c) policy[static_cast<size_t>(c) * H + h] = u;
      }
    }
  }
}

void validate_policy(const PublicTree& tree, int H, const std::vector<double>& policy) {
  const size_t expected = static_cast<size_t>(tree.size()) * H;
  if (policy.size() != expected) {
    std::ostringstream msg;
    msg << "policy has " << policy.size() << " entries, expected " << tree.size() << " nodes x " << H
        << " hands = " << expected;
    throw std::invalid_argument(msg.str());
  }
  for (int n : tree.decision_nodes) {
    const int begin = tree.first_child[n], end = begin + tree.num_children[n];
    for (int h = 0; h < H; ++h) {
      double total = 0.0;
      for (int c = begin; c < end; ++c) {
        const double p = policy[static_cast<size_t>(c) * H + h];
        if (!std::isfinite(p) || p < 0.0) {
          std::ostringstream msg;
          msg << "policy entry for node " << c << ", hand " << h << " is " << p
              << "; probabilities must be finite and non-negative";
          throw std::invalid_argument(msg.str());
        }
        total += p;
      }
      if (std::abs(total - 1.0) > 1e-6) {
        std::ostringstream msg;
        msg << "policy at node " << n << ", hand " << h << " sums to " << total << ", not 1";
        throw std::invalid_argument(msg.str());
      }
    }
  }
}

}  // namespace rebel
