#include "core/best_response.h"

#include <stdexcept>

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
