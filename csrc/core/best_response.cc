#include "core/best_response.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/tree_ops.h"

namespace rebel {
namespace {

void require_full_tree(const PublicTree& tree) {
  if (!tree.pseudo_leaves.empty()) {
    throw std::invalid_argument("exact best response needs a tree without depth limit (found pseudo-leaves)");
  }
}

double prior_weighted(const Game& game, const std::vector<double>& values) {
  const auto& prior = game.hand_prior();
  double total = 0.0;
  for (int h = 0; h < game.num_hands(); ++h) total += prior[h] * values[h];
  return total;
}

}  // namespace

double best_response_value(const Game& game, const PublicTree& tree, const std::vector<double>& policy,
                           int player, std::vector<double>* hand_values, std::vector<int>* br_child) {
  require_full_tree(tree);
  const int H = game.num_hands();
  validate_policy(tree, H, policy);
  std::vector<double> opp_reach, values;
  compute_reach(tree, H, policy, 1 - player, game.hand_prior().data(), &opp_reach);
  fill_terminal_values(game, tree, player, opp_reach, &values);
  backup_best_response(tree, H, player, &values, br_child);
  if (hand_values) hand_values->assign(values.begin(), values.begin() + H);
  return prior_weighted(game, values);
}

double expected_value(const Game& game, const PublicTree& tree, const std::vector<double>& policy,
                      int player) {
  require_full_tree(tree);
  const int H = game.num_hands();
  validate_policy(tree, H, policy);
  std::vector<double> opp_reach, values;
  compute_reach(tree, H, policy, 1 - player, game.hand_prior().data(), &opp_reach);
  fill_terminal_values(game, tree, player, opp_reach, &values);
  backup_policy_values(tree, H, policy, player, &values);
  return prior_weighted(game, values);
}

ExploitabilityReport exploitability_from(const Game& game, const PublicTree& tree, const std::vector<double>& policy,
                                         const std::array<std::vector<double>, 2>& root_reach) {
  require_full_tree(tree);
  const int H = game.num_hands();
  validate_policy(tree, H, policy);
  for (int p = 0; p < 2; ++p) {
    if (static_cast<int>(root_reach[p].size()) != H) {
      throw std::invalid_argument("root reach of player " + std::to_string(p) + " has " +
                                  std::to_string(root_reach[p].size()) + " entries, expected " + std::to_string(H));
    }
    for (double r : root_reach[p]) {
      if (!(r >= 0.0) || !std::isfinite(r)) throw std::invalid_argument("root reaches must be finite and >= 0");
    }
  }
  double mass = 0.0;
  for (int h = 0; h < H; ++h) {
    if (root_reach[0][h] == 0.0) continue;
    for (int o = 0; o < H; ++o) mass += root_reach[0][h] * root_reach[1][o] * game.hand_pair_weight(h, o);
  }
  if (!(mass > 0.0)) throw std::invalid_argument("the root reaches give no deal that can occur (joint mass 0)");
  ExploitabilityReport report;
  std::vector<double> opp_reach, values;
  for (int p = 0; p < 2; ++p) {
    compute_reach(tree, H, policy, 1 - p, root_reach[1 - p].data(), &opp_reach);
    fill_terminal_values(game, tree, p, opp_reach, &values);
    std::vector<double> follow = values;
    backup_best_response(tree, H, p, &values, nullptr);
    double br = 0.0, ev = 0.0;
    for (int h = 0; h < H; ++h) br += root_reach[p][h] * values[h];
    report.br_values[p] = br / mass;
    if (p == 0) {
      backup_policy_values(tree, H, policy, 0, &follow);
      for (int h = 0; h < H; ++h) ev += root_reach[0][h] * follow[h];
      report.value0 = ev / mass;
    }
  }
  report.exploitability = 0.5 * (report.br_values[0] + report.br_values[1]);
  return report;
}

ExploitabilityReport exploitability(const Game& game, const PublicTree& tree,
                                    const std::vector<double>& policy) {
  if (!tree.root_history().empty()) {
    throw std::invalid_argument("exploitability needs the full game tree (root = empty history)");
  }
  ExploitabilityReport report;
  for (int p = 0; p < 2; ++p) report.br_values[p] = best_response_value(game, tree, policy, p);
  report.exploitability = 0.5 * (report.br_values[0] + report.br_values[1]);
  report.value0 = expected_value(game, tree, policy, 0);
  return report;
}

}  // namespace rebel
