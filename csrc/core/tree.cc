#include "core/tree.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace rebel {

double max_tree_cells() {
  // A solver keeps about ten doubles per (node, hand) cell; stay under half of RAM.
  const double pages = static_cast<double>(sysconf(_SC_PHYS_PAGES));
  const double page_size = static_cast<double>(sysconf(_SC_PAGESIZE));
  const double bytes = (pages > 0 && page_size > 0) ? pages * page_size : 8e9;
  return 0.5 * bytes / (10.0 * sizeof(double));
}

ChanceLeaves parse_chance_leaves(const std::string& name) {
  if (name == "none") return ChanceLeaves::kNone;
  if (name == "after_deal") return ChanceLeaves::kAfterDeal;
  if (name == "at_deal") return ChanceLeaves::kAtDeal;
  throw std::invalid_argument("chance leaves must be 'none', 'after_deal' or 'at_deal', got '" + name + "'");
}

std::string chance_leaves_name(ChanceLeaves chance_leaves) {
  switch (chance_leaves) {
    case ChanceLeaves::kNone: return "none";
    case ChanceLeaves::kAfterDeal: return "after_deal";
    case ChanceLeaves::kAtDeal: return "at_deal";
  }
  return "none";
}

PublicTree build_tree(const Game& game, const History& root, int max_depth, ChanceLeaves chance_leaves) {
  const double cap = max_tree_cells() / game.num_hands();
  const double nodes = game.count_tree_nodes(root, max_depth, cap);
  if (nodes > cap || nodes > 2e9) {
    std::ostringstream msg;
    // The count may stop just past the cap: report the cap, not the partial count.
    const double shown = nodes > cap ? cap : nodes;
    msg << game.description() << ": a public tree of " << (nodes > cap ? "more than " : "") << shown
        << " nodes x " << game.num_hands() << " hands does not fit in memory (limit " << cap * game.num_hands()
        << " node-hand cells)";
    throw std::invalid_argument(msg.str());
  }
  if (game.is_terminal(root)) throw std::invalid_argument("build_tree: the root history is terminal");

  PublicTree t;
  t.game = game.description();
  t.num_hands = game.num_hands();
  const auto reserve = static_cast<size_t>(nodes);
  t.parent.reserve(reserve);
  t.history.reserve(reserve);
  auto add_node = [&](int parent, Action action, History history, int depth) {
    t.parent.push_back(parent);
    t.action.push_back(action);
    t.depth.push_back(depth);
    t.first_child.push_back(-1);
    t.num_children.push_back(0);
    const bool terminal = game.is_terminal(history);
    const int player = terminal ? -1 : game.player_to_act(history);
    const bool chance = player == kChancePlayer;
    t.player.push_back(player);
    NodeKind kind = chance ? NodeKind::kChance : NodeKind::kDecision;
    // After the deal, a deal is never cut at max_depth: its outcomes are the leaves, so every
    // leaf of such a subgame is a state where a later search starts.
    const bool after_deal = chance_leaves == ChanceLeaves::kAfterDeal;
    const bool cut_by_depth = max_depth >= 0 && depth >= max_depth && !(after_deal && chance);
    if (terminal) kind = NodeKind::kTerminal;
    else if (cut_by_depth || (after_deal && parent > 0 && t.kind[parent] == NodeKind::kChance) ||
             (chance_leaves == ChanceLeaves::kAtDeal && chance && parent >= 0))
      kind = NodeKind::kPseudoLeaf;
    t.kind.push_back(kind);
    t.history.push_back(std::move(history));
  };
  add_node(-1, -1, root, 0);
  std::vector<Action> actions;
  const int H = game.num_hands();
  for (int n = 0; n < t.size(); ++n) {  // breadth-first: the vector grows as we go
    switch (t.kind[n]) {
      case NodeKind::kTerminal: t.terminal_nodes.push_back(n); continue;
      case NodeKind::kPseudoLeaf: t.pseudo_leaves.push_back(n); continue;
      case NodeKind::kDecision: t.decision_nodes.push_back(n); break;
      case NodeKind::kChance: t.chance_nodes.push_back(n); break;
    }
    t.internal_nodes.push_back(n);
    game.legal_actions(t.history[n], &actions);
    if (actions.empty()) throw std::logic_error("non-terminal node without legal actions");
    t.first_child[n] = t.size();
    t.num_children[n] = static_cast<int>(actions.size());
    if (t.kind[n] == NodeKind::kChance) {
      const size_t start = t.chance_factors.size();
      t.chance_factors.resize(start + actions.size() * H);
      for (size_t k = 0; k < actions.size(); ++k) {
        double* f = &t.chance_factors[start + k * H];
        game.chance_factors(t.history[n], actions[k], f);
        for (int h = 0; h < H; ++h) {
          if (!(f[h] >= 0.0 && f[h] <= 1.0)) {
            throw std::logic_error(game.description() + ": chance factor outside [0, 1] at a chance node");
          }
        }
      }
    }
    for (Action a : actions) {
      History child = t.history[n];
      child.push_back(a);
      add_node(n, a, std::move(child), t.depth[n] + 1);
    }
  }
  if (!t.chance_nodes.empty()) {
    // Factors were appended in the order of t.chance_nodes.
    t.chance_offset.assign(t.size(), -1);
    long long offset = 0;
    for (int n : t.chance_nodes) {
      t.chance_offset[n] = offset;
      offset += static_cast<long long>(t.num_children[n]) * H;
    }
  }
  return t;
}

void check_tree_game(const Game& game, const PublicTree& tree) {
  if (tree.game != game.description()) {
    throw std::invalid_argument("the tree does not belong to " + game.description() + " (it was built for " +
                                tree.game + ")");
  }
}

std::vector<double> uniform_policy(const Game& game, const PublicTree& tree) {
  const int H = game.num_hands();
  std::vector<double> policy(static_cast<size_t>(tree.size()) * H, 0.0);
  for (int n : tree.decision_nodes) {
    const double p = 1.0 / tree.num_children[n];
    std::fill(policy.begin() + static_cast<size_t>(tree.first_child[n]) * H,
              policy.begin() + static_cast<size_t>(tree.first_child[n] + tree.num_children[n]) * H, p);
  }
  return policy;
}

int find_node(const PublicTree& tree, const History& history) {
  int node = 0;
  for (Action a : history) {
    if (tree.num_children[node] == 0) return -1;
    const int begin = tree.first_child[node];
    int next = -1;
    for (int c = begin; c < begin + tree.num_children[node]; ++c) {
      if (tree.action[c] == a) next = c;
    }
    if (next < 0) return -1;
    node = next;
  }
  return node;
}

}  // namespace rebel
