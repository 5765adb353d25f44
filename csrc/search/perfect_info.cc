#include "search/perfect_info.h"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/best_response.h"
#include "core/tree_ops.h"
#include "util/parallel_for.h"

namespace rebel {

void check_perfect_information(const Game& game) {
  if (game.num_hands() != 1 || !game.features_identify_state()) {
    throw std::invalid_argument("the exact perfect-information evaluation needs a game with one hand per player whose "
                                "public features identify the state; " + game.description() + " is not one");
  }
}

namespace {

// A state's identity: the player to act and the public features' bytes.
std::string state_key(const Game& game, const History& history) {
  std::vector<float> features(static_cast<size_t>(game.feature_size()));
  game.public_features(history, features.data());
  std::string key(1, static_cast<char>(game.player_to_act(history)));
  key.append(reinterpret_cast<const char*>(features.data()), features.size() * sizeof(float));
  return key;
}

struct SolvedState {
  std::shared_ptr<const PublicTree> tree;  // the depth-limited subgame below the state
  std::vector<double> policy;              // its limit policy (child-indexed, one hand)
};

// Solves the subgame below `history` for T half-steps and returns the mode-(b) limit: at each
// child c of a decision node s, sum_i w_i r_i(s) pi_i(c) normalised over s's children, where
// i runs over the even stopping iterations with the weights of sample_even_iteration
// (i/2 + 1) and r_i is the acting player's own reach at s under iterate i.
SolvedState solve_state(const GamePtr& game, const History& history, const SearchParams& params,
                        const ValueNetPtr& net, const CancelFlag* cancel) {
  SolvedState out;
  out.tree = std::make_shared<const PublicTree>(build_tree(*game, history, params.depth));
  const PublicTree& t = *out.tree;
  if (!t.pseudo_leaves.empty() && !net) {
    throw std::invalid_argument("depth-limited search needs a value net (depth " + std::to_string(params.depth) +
                                " is shorter than the game)");
  }
  const std::vector<double> one{1.0};
  SubgameSolver solver(game, out.tree, {one, one}, params.solver, net);
  std::vector<double> sum(static_cast<size_t>(t.size()), 0.0);
  std::array<std::vector<double>, 2> reach;
  for (int i = 0; i < params.iterations; ++i) {
    if (i % 2 == 0) {
      const double weight = i / 2 + 1.0;
      const std::vector<double>& played = solver.played_policy();
      for (int p = 0; p < 2; ++p) compute_reach(t, 1, played, p, one.data(), &reach[p]);
      for (int s : t.decision_nodes) {
        const double r = weight * reach[t.player[s]][s];
        for (int c = t.first_child[s]; c < t.first_child[s] + t.num_children[s]; ++c) sum[c] += r * played[c];
      }
    }
    if (cancel && cancel->load(std::memory_order_relaxed)) throw Cancelled();
    solver.step();
  }
  normalize_policy(t, 1, sum, &out.policy);
  return out;
}

}  // namespace

PerfectInfoSearch::PerfectInfoSearch(GamePtr game, SearchParams params, ValueNetPtr net)
    : game_(std::move(game)), params_(params), net_(std::move(net)) {
  if (!game_) throw std::invalid_argument("game is null");
  check_perfect_information(*game_);
  if (params_.warm_iterations != 0) {
    throw std::invalid_argument("PerfectInfoSearch has no policy-net warm start (warm_iterations must be 0)");
  }
  if (params_.depth < 1) throw std::invalid_argument("search depth must be >= 1, got " + std::to_string(params_.depth));
  if (params_.iterations < 1) {
    throw std::invalid_argument("search iterations must be >= 1, got " + std::to_string(params_.iterations));
  }
  full_tree_ = std::make_shared<const PublicTree>(build_tree(*game_, {}, -1));
  const PublicTree& full = *full_tree_;
  std::unordered_map<std::string, int> state_of_key;
  for (int n : full.decision_nodes) {
    if (full.depth[n] % params_.depth != 0) continue;
    const auto [it, inserted] =
        state_of_key.emplace(state_key(*game_, full.history[n]), static_cast<int>(state_history_.size()));
    if (inserted) state_history_.push_back(&full.history[n]);
    roots_.emplace_back(n, it->second);
  }
}

PerfectInfoEvaluation PerfectInfoSearch::evaluate(int threads, const CancelFlag* cancel,
                                                  std::atomic<long>* progress) const {
  if (threads < 1) throw std::invalid_argument("threads must be >= 1, got " + std::to_string(threads));
  const PublicTree& full = *full_tree_;
  const int states = num_states();

  // Each state is solved once; results do not depend on which thread solved it.
  std::vector<SolvedState> solved(static_cast<size_t>(states));
  parallel_for(static_cast<size_t>(states), threads, [&](size_t s) {
    solved[s] = solve_state(game_, *state_history_[s], params_, net_, cancel);
    if (progress) progress->fetch_add(1, std::memory_order_relaxed);
  });

  // Copy each root's state policy onto the full tree, matching the subgame's nodes to the
  // full tree's by position (both trees list legal actions in the same order).
  PerfectInfoEvaluation result;
  result.policy = uniform_policy(*game_, full);
  std::vector<int> to_full;
  for (const auto& [root, state] : roots_) {
    const PublicTree& t = *solved[state].tree;
    const std::vector<double>& policy = solved[state].policy;
    to_full.assign(static_cast<size_t>(t.size()), -1);
    to_full[0] = root;
    for (int s : t.decision_nodes) {
      for (int k = 0; k < t.num_children[s]; ++k) {
        const int c = t.first_child[s] + k;
        to_full[c] = full.first_child[to_full[s]] + k;
        result.policy[static_cast<size_t>(to_full[c])] = policy[static_cast<size_t>(c)];
      }
    }
  }
  const ExploitabilityReport report = exploitability(*game_, full, result.policy);
  result.exploitability = report.exploitability;
  result.br_values = report.br_values;
  return result;
}

}  // namespace rebel
