#include "search/selfplay.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>

#include "core/tree_ops.h"
#include "search/pbs.h"
#include "search/policy_start.h"

namespace rebel {

namespace {

// Index drawn from unnormalised non-negative weights (total > 0).
int draw(const double* weights, int n, double uniform01) {
  double total = 0.0;
  for (int i = 0; i < n; ++i) total += weights[i];
  double target = uniform01 * total, cumulative = 0.0;
  int last_positive = -1;
  for (int i = 0; i < n; ++i) {
    if (weights[i] <= 0.0) continue;
    last_positive = i;
    cumulative += weights[i];
    if (target < cumulative) return i;
  }
  return last_positive;  // rounding at the very top of the range
}

// Whether some pair of hands with positive beliefs can be dealt together. Exploration can
// lead each player's beliefs onto hands the other's rule out (both onto the one card left
// that their iterates play this way): no deal fits such a PBS and the episode ends there.
// O(H^2) where hands are not independent; a 1,326-hand game will want per-card sums.
bool admits_a_deal(const Game& game, const Beliefs& beliefs) {
  if (game.hands_independent()) return true;
  const int H = game.num_hands();
  for (int h0 = 0; h0 < H; ++h0) {
    if (!(beliefs[0][h0] > 0.0)) continue;
    for (int h1 = 0; h1 < H; ++h1) {
      if (beliefs[1][h1] > 0.0 && game.hand_pair_weight(h0, h1) > 0.0) return true;
    }
  }
  return false;
}

// Forwards to a value net and adds up the wall time spent in it (for the benchmarks'
// breakdown of a step; two clock reads per batch).
class TimedNet final : public ValueNet {
 public:
  explicit TimedNet(ValueNetPtr net) : net_(std::move(net)) {}
  void compute_values(const LeafQueryBatch& batch, double* out) override {
    const auto start = std::chrono::steady_clock::now();
    net_->compute_values(batch, out);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::string name() const override { return net_->name(); }
  double seconds = 0.0;

 private:
  ValueNetPtr net_;
};

// D_pi of a finished solve (definition in selfplay.h): the average policy `average` at every
// decision node of `tree` whose PBS under it (from the normalised root beliefs) is possible.
void collect_policy_examples(const Game& game, const PublicTree& tree, const Beliefs& root,
                             const std::vector<double>& average, SelfPlayStep* out) {
  const int H = game.num_hands(), A = game.num_actions(), row = query_size(game);
  std::array<std::vector<double>, 2> reach;
  for (int p = 0; p < 2; ++p) compute_reach(tree, H, average, p, root[p].data(), &reach[p]);
  Beliefs beliefs{std::vector<double>(H), std::vector<double>(H)};
  for (int n : tree.decision_nodes) {
    bool reached = true;
    for (int p = 0; p < 2; ++p) {
      const double* r = &reach[p][static_cast<size_t>(n) * H];
      double mass = 0.0;
      for (int h = 0; h < H; ++h) mass += r[h];
      reached = reached && mass > 0.0;
      if (reached) normalize_beliefs(r, H, beliefs[p].data());
    }
    if (!reached || !admits_a_deal(game, beliefs)) continue;
    const int actor = tree.player[n];
    const size_t k = static_cast<size_t>(out->policy_count++);
    out->policy_rows.resize((k + 1) * row, 0.0f);
    out->policy_targets.resize((k + 1) * H * A, 0.0f);
    out->policy_weights.resize((k + 1) * H, 0.0f);
    out->policy_legal.resize((k + 1) * A, 0);
    write_query_row(game, tree.history[n], actor, actor, beliefs[0].data(), beliefs[1].data(), &out->policy_rows[k * row]);
    float* target = &out->policy_targets[k * H * A];
    for (int c = tree.first_child[n]; c < tree.first_child[n] + tree.num_children[n]; ++c) {
      out->policy_legal[k * A + tree.action[c]] = 1;
      for (int h = 0; h < H; ++h) target[h * A + tree.action[c]] = static_cast<float>(average[static_cast<size_t>(c) * H + h]);
    }
    for (int h = 0; h < H; ++h) out->policy_weights[k * H + h] = static_cast<float>(beliefs[actor][h]);
  }
}

}  // namespace

SelfPlayGenerator::SelfPlayGenerator(GamePtr game, SelfPlayParams params, ValueNetPtr net, PolicyNetPtr policy_net)
    : game_(std::move(game)), params_(params), net_(std::move(net)), policy_net_(std::move(policy_net)) {
  if (!game_) throw std::invalid_argument("SelfPlayGenerator: a game is required");
  check_search_warm_start(params_.solver, params_.warm_iterations, policy_net_ != nullptr);
  if (params_.warm_iterations == 0) policy_net_ = nullptr;  // ignored: the cold start
  if (params_.depth < 1) throw std::invalid_argument("self-play depth must be >= 1, got " + std::to_string(params_.depth));
  if (params_.iterations < 2) {  // both players must update once for both targets to exist
    throw std::invalid_argument("self-play iterations must be >= 2, got " + std::to_string(params_.iterations));
  }
  if (!(params_.epsilon >= 0.0 && params_.epsilon <= 1.0)) {
    throw std::invalid_argument("epsilon must lie in [0, 1], got " + std::to_string(params_.epsilon));
  }
  if (!params_.full_depth_solve && !net_) {
    throw std::invalid_argument("depth-limited self-play needs a value net");
  }
}

int SelfPlayGenerator::sample_iteration(double u) const {
  return sample_even_iteration(params_.iterations, u, params_.sampling == IterationSampling::kLinear,
                               params_.warm_iterations);
}

std::shared_ptr<const PublicTree> SelfPlayGenerator::subgame(const History& history) const {
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(history);
    if (it != cache_.end()) return it->second;
  }
  // Built outside the lock (two threads may build the same tree; the first one is kept).
  // As at test time, a depth-limited subgame ends with its betting round: the dealt cards
  // are its leaves (build_tree's chance_leaves; no effect on games without public chance).
  auto tree = std::make_shared<const PublicTree>(
      params_.full_depth_solve ? build_tree(*game_, history, -1)
                               : build_tree(*game_, history, params_.depth, ChanceLeaves::kAfterDeal));
  std::lock_guard<std::mutex> lock(cache_mutex_);
  return cache_.emplace(history, std::move(tree)).first->second;
}

SelfPlayGenerator::SolveTokens SelfPlayGenerator::solve_tokens() const {
  SolveTokens tokens;
  tokens.values = params_.full_depth_solve ? 1 : net_->values_token();  // the full-depth solve asks no net
  tokens.policies = policy_net_ ? policy_net_->policies_token() : 1;
  return tokens;
}

void SelfPlayGenerator::start_solve(std::optional<SubgameSolver>& solver, const std::shared_ptr<const PublicTree>& tree,
                                    const Beliefs& beliefs, ValueNetPtr timed) const {
  solver.emplace(game_, tree, beliefs, params_.solver, std::move(timed));
  if (policy_net_) {
    solver->warm_start(policy_net_start(*game_, *tree, solver->root_reach(), *policy_net_), params_.warm_iterations);
  }
}

bool SelfPlayGenerator::reuses_initial_solve(const History& history, const PublicTree& tree,
                                             int forced_iteration) const {
  if (!params_.reuse_initial_solve || !history.empty()) return false;
  if (forced_iteration >= 0 && forced_iteration % 2 != 0) return false;  // only even iterates are kept
  if (!solve_tokens().usable()) return false;
  const size_t bytes = static_cast<size_t>((params_.iterations + 1) / 2) * tree.size() *
                       static_cast<size_t>(game_->num_hands()) * sizeof(double);
  return bytes <= kMaxInitialSolveBytes;
}

std::shared_ptr<const SelfPlayGenerator::InitialSolve> SelfPlayGenerator::initial_solve(
    const std::shared_ptr<const PublicTree>& tree, const Beliefs& beliefs, const CancelFlag* cancel,
    double* net_seconds) const {
  std::lock_guard<std::mutex> lock(initial_mutex_);
  const SolveTokens tokens = solve_tokens();
  if (initial_ && initial_->tokens == tokens && initial_->beliefs == beliefs) {
    reused_.fetch_add(1);
    return initial_;
  }
  auto timed = params_.full_depth_solve ? nullptr : std::make_shared<TimedNet>(net_);
  std::optional<SubgameSolver> started;
  start_solve(started, tree, beliefs, timed);
  SubgameSolver& solver = *started;
  auto solved = std::make_shared<InitialSolve>();
  solved->beliefs = beliefs;
  solved->tokens = tokens;
  solved->iterates.reserve(static_cast<size_t>((params_.iterations + 1) / 2));
  for (int i = 0; i < params_.iterations; ++i) {
    if (i % 2 == 0) solved->iterates.push_back(solver.played_policy());
    if (cancel && cancel->load(std::memory_order_relaxed)) throw Cancelled();
    solver.step();
  }
  solved->root = solver.root_reach();
  for (int q = 0; q < 2; ++q) solved->values[q] = solver.root_values(q);
  if (params_.collect_policy) solved->average = solver.average_policy();
  if (timed) *net_seconds = timed->seconds;
  computed_.fetch_add(1);
  // New weights installed during the solve: the solve is this step's, not the cache's.
  if (solve_tokens() == tokens) initial_ = solved;
  return solved;
}

SelfPlayStep SelfPlayGenerator::step(const History& history, const Beliefs& beliefs, uint64_t seed,
                                     int forced_iteration, bool keep_iterate, const CancelFlag* cancel) const {
  const Game& game = *game_;
  if (game.is_terminal(history)) throw std::invalid_argument("self-play step at a terminal public state");
  if (forced_iteration >= params_.iterations) {
    throw std::invalid_argument("forced iteration must be < iterations (" + std::to_string(params_.iterations) + ")");
  }
  const int H = game.num_hands();
  const std::shared_ptr<const PublicTree> tree_ptr = subgame(history);
  const PublicTree& tree = *tree_ptr;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);

  SelfPlayStep out;
  out.num_actions = game.num_actions();
  const double u_iteration = uniform(rng);
  out.sampled_iteration = forced_iteration >= 0 ? forced_iteration : sample_iteration(u_iteration);
  out.exploring_player = uniform(rng) < 0.5 ? 0 : 1;

  // The solve: either the initial PBS's kept one, or this step's own, run to the sampled
  // iteration (the walk's iterate), then to T (the targets). Both give the same numbers.
  std::shared_ptr<const InitialSolve> kept;
  std::optional<SubgameSolver> solver;
  std::shared_ptr<TimedNet> timed;
  std::vector<double> own_iterate;
  auto run_steps = [&](int count) {
    for (int i = 0; i < count; ++i) {
      if (cancel && cancel->load(std::memory_order_relaxed)) throw Cancelled();
      solver->step();
    }
  };
  if (reuses_initial_solve(history, tree, forced_iteration)) {
    kept = initial_solve(tree_ptr, beliefs, cancel, &out.net_seconds);
  } else {
    timed = params_.full_depth_solve ? nullptr : std::make_shared<TimedNet>(net_);
    start_solve(solver, tree_ptr, beliefs, timed);
    run_steps(out.sampled_iteration);
    own_iterate = solver->played_policy();
  }
  const std::vector<double>& iterate =
      kept ? kept->iterates.at(static_cast<size_t>(out.sampled_iteration / 2)) : own_iterate;
  const Beliefs& root = kept ? kept->root : solver->root_reach();  // normalised

  // Hands for the walk, from the joint distribution of the root beliefs.
  if (game.hands_independent()) {
    for (int p = 0; p < 2; ++p) out.hands[p] = draw(root[p].data(), H, uniform(rng));
  } else {
    std::vector<double> joint(static_cast<size_t>(H) * H);
    for (int h0 = 0; h0 < H; ++h0)
      for (int h1 = 0; h1 < H; ++h1) joint[h0 * H + h1] = root[0][h0] * root[1][h1] * game.hand_pair_weight(h0, h1);
    const int pair = draw(joint.data(), H * H, uniform(rng));
    if (pair < 0) throw std::invalid_argument("the root beliefs give no possible deal of hands");
    out.hands = {pair / H, pair % H};
  }

  // Walk: iterate t's policy, with exploration at the exploring player's nodes. It stops
  // after `depth` actions or right after a public deal, where test-time search starts its
  // next subgame: the card is drawn given the walk's hands (P(b | h0, h1) = f_b(h0) f_b(h1))
  // and both beliefs take the card's factors (Bayes' rule for the public card).
  Beliefs next = root;
  int node = 0;
  while (tree.kind[node] == NodeKind::kChance ||
         (tree.kind[node] == NodeKind::kDecision && tree.depth[node] < params_.depth)) {
    if (tree.kind[node] == NodeKind::kChance) {
      const int first = tree.first_child[node], count = tree.num_children[node];
      const double* factors = tree.chance_factors_at(node);
      std::vector<double> probs(count);
      for (int k = 0; k < count; ++k) {
        probs[k] = factors[static_cast<size_t>(k) * H + out.hands[0]] * factors[static_cast<size_t>(k) * H + out.hands[1]];
      }
      const int k = draw(probs.data(), count, uniform(rng));
      if (k < 0) throw std::logic_error("self-play walk: no public outcome is possible for the walk's hands");
      for (int p = 0; p < 2; ++p) multiply_beliefs(&next[p], factors + static_cast<size_t>(k) * H);
      node = first + k;
      break;
    }
    const int p = tree.player[node];
    const int first = tree.first_child[node], count = tree.num_children[node];
    const double u_explore = uniform(rng), u_action = uniform(rng);
    int child;
    if (p == out.exploring_player && u_explore < params_.epsilon) {
      const int k = static_cast<int>(u_action * count);
      child = first + (k < count ? k : count - 1);
    } else {
      std::vector<double> probs(count);
      for (int k = 0; k < count; ++k) probs[k] = iterate[static_cast<size_t>(first + k) * H + out.hands[p]];
      const int k = draw(probs.data(), count, u_action);
      if (k < 0) throw std::logic_error("self-play walk: the iterate gives a hand no action");
      child = first + k;
    }
    multiply_beliefs(&next[p], &iterate[static_cast<size_t>(child) * H]);  // Bayes, normalised below
    node = child;
  }
  out.next_history = tree.history[node];
  out.next_terminal = tree.kind[node] == NodeKind::kTerminal;
  if (!out.next_terminal) {
    // An exploring action the iterate never takes leaves no mass: beliefs become uniform.
    for (int p = 0; p < 2; ++p) normalize_beliefs(next[p].data(), H, next[p].data());
    if (game.has_public_chance()) keep_possible(possible_hands(game, out.next_history), &next);
    if (admits_a_deal(game, next)) {
      out.next_beliefs = std::move(next);
    } else {
      out.next_terminal = out.next_no_deal = true;
    }
  }
  if (keep_iterate) out.iterate = iterate;

  if (solver) run_steps(params_.iterations - out.sampled_iteration);

  // Training examples: the root query row of each player and its averaged root values.
  const int row = query_size(game);
  out.rows.assign(static_cast<size_t>(2) * row, 0.0f);
  out.targets.assign(static_cast<size_t>(2) * H, 0.0f);
  const int actor = game.player_to_act(history);
  for (int q = 0; q < 2; ++q) {
    write_query_row(game, history, actor, q, root[0].data(), root[1].data(), &out.rows[static_cast<size_t>(q) * row]);
    const std::vector<double>& values = kept ? kept->values[q] : solver->root_values(q);
    for (int h = 0; h < H; ++h) out.targets[static_cast<size_t>(q) * H + h] = static_cast<float>(values[h]);
  }
  if (params_.collect_policy) {
    collect_policy_examples(game, tree, root, kept ? kept->average : solver->average_policy(), &out);
  }
  if (timed) out.net_seconds = timed->seconds;
  return out;
}

}  // namespace rebel
