#include "search/test_time_search.h"

#include <algorithm>
#include <functional>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <utility>

#include "core/best_response.h"
#include "core/tree_ops.h"
#include "search/pbs.h"
#include "search/policy_start.h"
#include "util/parallel_for.h"

namespace rebel {

uint64_t mix_seed(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void check_search_warm_start(const SolverParams& solver, int warm_iterations, bool has_policy_net) {
  if (warm_iterations < 0) {
    throw std::invalid_argument("warm_iterations must be >= 0, got " + std::to_string(warm_iterations));
  }
  if (warm_iterations == 0) {
    if (solver.warm_prior != 0.0) {
      throw std::invalid_argument("warm_prior = " + std::to_string(solver.warm_prior) +
                                  " needs a warm start (warm_iterations > 0)");
    }
    return;
  }
  if (!has_policy_net) {
    throw std::invalid_argument("warm_iterations = " + std::to_string(warm_iterations) +
                                " needs a policy net (the warm start's sigma0)");
  }
  check_warm_start_params(solver, warm_iterations);
}

TestTimeSearch::TestTimeSearch(GamePtr game, SearchParams params, ValueNetPtr net, PolicyNetPtr policy_net)
    : game_(std::move(game)), params_(params), net_(std::move(net)), policy_net_(std::move(policy_net)) {
  check_search_warm_start(params_.solver, params_.warm_iterations, policy_net_ != nullptr);
  if (params_.warm_iterations == 0) policy_net_ = nullptr;  // ignored: the cold search
  if (params_.depth < 1) throw std::invalid_argument("search depth must be >= 1, got " + std::to_string(params_.depth));
  if (params_.iterations < 1) throw std::invalid_argument("search iterations must be >= 1, got " + std::to_string(params_.iterations));
  full_tree_ = std::make_shared<const PublicTree>(build_tree(*game_, {}, -1));
  const PublicTree& full = *full_tree_;
  subgames_.resize(full.size());
  // Events since the start of the node's betting round (the game's start or a public deal):
  // searches start every `depth` of them, and a subgame also ends at the next deal. After the
  // deal (kAfterDeal) the dealt outcomes are its pseudo-leaves and start the next searches;
  // at the deal (kAtDeal) the chance node itself is the leaf and the next search's root.
  if (params_.chance_leaves == ChanceLeaves::kNone) {
    throw std::invalid_argument("test-time search: chance_leaves must be after the deal or at the deal");
  }
  const bool at_deal = params_.chance_leaves == ChanceLeaves::kAtDeal;
  std::vector<int> round_depth(full.size(), 0);
  for (int n : full.internal_nodes) {
    for (int c = full.first_child[n]; c < full.first_child[n] + full.num_children[n]; ++c) {
      if (full.kind[c] == NodeKind::kChance && at_deal) round_depth[c] = 0;  // a root
      else if (full.kind[n] == NodeKind::kChance) round_depth[c] = at_deal ? 1 : 0;  // the deal counts
      else round_depth[c] = round_depth[n] + 1;
    }
  }
  for (int n : full.internal_nodes) {
    const bool root = full.kind[n] == NodeKind::kDecision ? round_depth[n] % params_.depth == 0
                                                          : at_deal || n == 0;  // a deal, or the game's start
    if (!root) continue;
    auto sg = std::make_unique<Subgame>();
    sg->tree = std::make_shared<const PublicTree>(build_tree(*game_, full.history[n], params_.depth,
                                                             params_.chance_leaves));
    const PublicTree& t = *sg->tree;
    sg->to_full.assign(t.size(), -1);
    sg->to_full[0] = n;
    for (int s : t.internal_nodes) {
      for (int k = 0; k < t.num_children[s]; ++k) {
        sg->to_full[t.first_child[s] + k] = full.first_child[sg->to_full[s]] + k;
      }
    }
    if (!t.pseudo_leaves.empty() && !net_) {
      throw std::invalid_argument("depth-limited search needs a value net (depth " + std::to_string(params_.depth) +
                                  " is shorter than the game)");
    }
    if (game_->has_public_chance()) {
      for (int leaf : t.pseudo_leaves) sg->leaf_possible.push_back(possible_hands(*game_, t.history[leaf]));
    }
    subgames_[n] = std::move(sg);
  }
  // The order search() draws the stops in: a subgame first, then the searches below its
  // pseudo-leaves, each in turn (pre-order).
  // Also the deepest chain of searches and the most pseudo-leaves of one subgame, which bound
  // the leaf beliefs sampled_policies holds at once.
  draw_index_.assign(full.size(), -1);
  std::vector<std::pair<int, int>> pending{{0, 1}};  // (search root, its level)
  int levels = 0;
  size_t most_leaves = 0;
  while (!pending.empty()) {
    const auto [n, level] = pending.back();
    pending.pop_back();
    draw_index_[n] = static_cast<int>(draw_order_.size());
    draw_order_.push_back(n);
    if (!subgames_.at(n)) throw std::logic_error("test-time search: a subgame leaf is not a search root");
    const Subgame& sg = *subgames_.at(n);
    const std::vector<int>& leaves = sg.tree->pseudo_leaves;
    levels = std::max(levels, level);
    most_leaves = std::max(most_leaves, leaves.size());
    for (auto it = leaves.rbegin(); it != leaves.rend(); ++it) pending.push_back({sg.to_full[*it], level + 1});
  }
  shared_bytes_per_sample_ =
      static_cast<double>(levels) * static_cast<double>(most_leaves) * 2.0 * game_->num_hands() * sizeof(double);
  // Sharing the root trajectory stores T/2 policies of the root subgame and their leaf
  // beliefs; skip it when that would take more than 256 MiB.
  const PublicTree& root_tree = *subgames_.at(0)->tree;
  const double bytes = 0.5 * params_.iterations * (root_tree.size() + 2.0 * root_tree.pseudo_leaves.size()) *
                       game_->num_hands() * sizeof(double);
  share_root_trajectory_ = bytes <= 256.0 * (1 << 20);
}

int sample_chunk_size(double policy_bytes, double shared_bytes) {
  const double by_policies = policy_bytes > 0.0 ? static_cast<double>(1 << 30) / policy_bytes : 1024.0;
  const double by_beliefs = shared_bytes > 0.0 ? static_cast<double>(1 << 29) / shared_bytes : 1024.0;
  return static_cast<int>(std::clamp(std::min(by_policies, by_beliefs), 1.0, 1024.0));
}

int TestTimeSearch::samples_per_chunk() const {
  const double policy_bytes = static_cast<double>(full_tree_->size()) * game_->num_hands() * sizeof(double);
  return sample_chunk_size(policy_bytes, shared_bytes_per_sample_);
}

int TestTimeSearch::num_search_roots() const {
  int count = 0;
  for (const auto& sg : subgames_) count += sg != nullptr;
  return count;
}

int sample_even_iteration(int iterations, double u, bool linear, int offset) {
  const int m_count = (iterations + 1) / 2;  // even half-steps 0, 2, ..., < T
  if (!linear) {
    const int m = static_cast<int>(u * m_count);
    return 2 * (m < m_count ? m : m_count - 1);
  }
  // Weights offset + m + 1; offset 0 keeps the original expression (bit for bit).
  const double target = offset == 0 ? u * 0.5 * m_count * (m_count + 1.0)
                                    : u * (0.5 * m_count * (m_count + 1.0) + static_cast<double>(offset) * m_count);
  double cumulative = 0.0;
  for (int m = 0; m < m_count; ++m) {
    cumulative += (offset + m) + 1.0;
    if (target < cumulative) return 2 * m;
  }
  return 2 * (m_count - 1);
}

int TestTimeSearch::sample_iteration(double u) const {
  return sample_even_iteration(params_.iterations, u, true, params_.warm_iterations);
}

SubgameSolver TestTimeSearch::make_solver(std::shared_ptr<const PublicTree> tree, const Beliefs& beliefs) const {
  SubgameSolver solver(game_, std::move(tree), beliefs, params_.solver, net_);
  if (policy_net_) {
    solver.warm_start(policy_net_start(*game_, solver.tree(), solver.root_reach(), *policy_net_),
                      params_.warm_iterations);
  }
  return solver;
}

template <class Rng>
void TestTimeSearch::search(int full_node, const Beliefs& beliefs, SearchMode mode, Rng* rng,
                            std::vector<double>* policy, const CancelFlag* cancel,
                            std::atomic<long>* progress) const {
  if (!subgames_.at(full_node)) throw std::logic_error("test-time search: a subgame leaf is not a search root");
  const Subgame& sg = *subgames_.at(full_node);
  const PublicTree& t = *sg.tree;
  const int H = game_->num_hands();
  SubgameSolver solver = make_solver(sg.tree, beliefs);
  int steps = params_.iterations;
  if (mode == SearchMode::kSampled) {
    steps = sample_iteration(std::uniform_real_distribution<double>(0.0, 1.0)(*rng));
  }
  const bool shared_root = mode == SearchMode::kSampled && full_node == 0 && share_root_trajectory_;
  for (int i = 0; i < (shared_root ? 0 : steps); ++i) {
    if (cancel && cancel->load(std::memory_order_relaxed)) throw Cancelled();
    solver.step();
  }
  const RootIterate* recorded = shared_root ? &root_iterate(steps, cancel) : nullptr;
  const std::vector<double>& played = recorded                       ? recorded->policy
                                      : mode == SearchMode::kAverage ? solver.average_policy()
                                                                     : solver.played_policy();
  for (int s : t.decision_nodes) {
    for (int c = t.first_child[s]; c < t.first_child[s] + t.num_children[s]; ++c) {
      std::copy(&played[static_cast<size_t>(c) * H], &played[static_cast<size_t>(c) * H] + H,
                &(*policy)[static_cast<size_t>(sg.to_full[c]) * H]);
    }
  }
  if (progress) progress->fetch_add(1, std::memory_order_relaxed);
  if (t.pseudo_leaves.empty()) return;
  const std::vector<double> at_leaves =
      recorded ? recorded->leaf_beliefs : leaf_beliefs(sg, solver, played, mode == SearchMode::kSampled);
  for (size_t i = 0; i < t.pseudo_leaves.size(); ++i) {
    // After a deal the leaf's reaches carry the card's chance factors, so its normalised
    // beliefs are already Bayes' rule for the public card.
    const double* b = &at_leaves[i * 2 * H];
    Beliefs next{std::vector<double>(b, b + H), std::vector<double>(b + H, b + 2 * H)};
    if (!sg.leaf_possible.empty()) keep_possible(sg.leaf_possible[i], &next);
    search(sg.to_full[t.pseudo_leaves[i]], next, mode, rng, policy, cancel, progress);
  }
}

std::vector<double> TestTimeSearch::leaf_beliefs(const Subgame& sg, const SubgameSolver& solver,
                                                 const std::vector<double>& played, bool iterate) const {
  const PublicTree& t = *sg.tree;
  const int H = game_->num_hands();
  std::vector<double> out(t.pseudo_leaves.size() * 2 * H);
  if (iterate && solver.tracks_orders()) {
    for (size_t i = 0; i < t.pseudo_leaves.size(); ++i) {
      for (int p = 0; p < 2; ++p) solver.iterate_beliefs(t.pseudo_leaves[i], p, &out[(i * 2 + p) * H]);
    }
    return out;
  }
  std::array<std::vector<double>, 2> reach;
  for (int p = 0; p < 2; ++p) compute_reach(t, H, played, p, solver.root_reach()[p].data(), &reach[p]);
  for (size_t i = 0; i < t.pseudo_leaves.size(); ++i) {
    for (int p = 0; p < 2; ++p) {
      normalize_beliefs(&reach[p][static_cast<size_t>(t.pseudo_leaves[i]) * H], H, &out[(i * 2 + p) * H]);
    }
  }
  return out;
}

const TestTimeSearch::RootIterate& TestTimeSearch::root_iterate(int iteration, const CancelFlag* cancel) const {
  std::lock_guard<std::mutex> lock(root_mutex_);
  if (root_iterates_.empty()) {
    const Subgame& sg = *subgames_.at(0);
    SubgameSolver solver = make_solver(sg.tree, {game_->hand_prior(), game_->hand_prior()});
    std::vector<RootIterate> iterates;
    iterates.reserve((params_.iterations + 1) / 2);
    for (int i = 0; i < params_.iterations; ++i) {
      if (i % 2 == 0) {
        const std::vector<double>& policy = solver.played_policy();
        iterates.push_back({policy, leaf_beliefs(sg, solver, policy, true)});
      }
      if (cancel && cancel->load(std::memory_order_relaxed)) throw Cancelled();
      solver.step();
    }
    root_iterates_ = std::move(iterates);
  }
  return root_iterates_.at(static_cast<size_t>(iteration / 2));
}

std::vector<double> TestTimeSearch::average_policy(const CancelFlag* cancel, std::atomic<long>* progress) const {
  std::vector<double> policy = uniform_policy(*game_, *full_tree_);
  std::mt19937_64 unused(0);
  search(0, {game_->hand_prior(), game_->hand_prior()}, SearchMode::kAverage, &unused, &policy, cancel, progress);
  return policy;
}

std::vector<double> TestTimeSearch::sampled_policy(uint64_t seed, const CancelFlag* cancel) const {
  std::vector<double> policy = uniform_policy(*game_, *full_tree_);
  std::mt19937_64 rng(seed);
  search(0, {game_->hand_prior(), game_->hand_prior()}, SearchMode::kSampled, &rng, &policy, cancel);
  return policy;
}

std::vector<std::vector<double>> TestTimeSearch::sampled_policies(const std::vector<uint64_t>& seeds, int threads,
                                                                  const CancelFlag* cancel,
                                                                  std::atomic<long>* progress) const {
  if (threads < 1) throw std::invalid_argument("threads must be >= 1, got " + std::to_string(threads));
  const int count = static_cast<int>(seeds.size());
  std::vector<std::vector<double>> policies(seeds.size(), uniform_policy(*game_, *full_tree_));
  if (count == 0) return policies;
  // search() draws one stop per subgame, in draw_order_; draw them all first.
  std::vector<std::vector<int>> stops(seeds.size(), std::vector<int>(draw_order_.size()));
  for (int m = 0; m < count; ++m) {
    std::mt19937_64 rng(seeds[static_cast<size_t>(m)]);
    for (int& stop : stops[static_cast<size_t>(m)]) {
      stop = sample_iteration(std::uniform_real_distribution<double>(0.0, 1.0)(rng));
    }
  }
  std::vector<int> everyone(seeds.size());
  std::iota(everyone.begin(), everyone.end(), 0);
  const std::vector<StopGroup> groups = solve_for_members(
      0, {game_->hand_prior(), game_->hand_prior()}, everyone, stops, &policies, cancel);
  // Different stops at the root give disjoint sets of samples: one task each.
  parallel_for(groups.size(), threads, [&](size_t g) {
    descend(0, groups[g], stops, &policies, cancel);
    if (progress) progress->fetch_add(static_cast<long>(groups[g].members.size()));
  });
  return policies;
}

std::vector<TestTimeSearch::StopGroup> TestTimeSearch::solve_for_members(
    int full_node, const Beliefs& beliefs, const std::vector<int>& members, const std::vector<std::vector<int>>& stops,
    std::vector<std::vector<double>>* policies, const CancelFlag* cancel) const {
  const Subgame& sg = *subgames_.at(full_node);
  const PublicTree& t = *sg.tree;
  const int H = game_->num_hands();
  const size_t j = static_cast<size_t>(draw_index_.at(full_node));
  std::vector<int> by_stop = members;
  std::stable_sort(by_stop.begin(), by_stop.end(), [&](int a, int b) {
    return stops[static_cast<size_t>(a)][j] < stops[static_cast<size_t>(b)][j];
  });
  SubgameSolver solver = make_solver(sg.tree, beliefs);
  std::vector<StopGroup> groups;
  int done = 0;
  for (size_t a = 0; a < by_stop.size();) {
    const int stop = stops[static_cast<size_t>(by_stop[a])][j];
    size_t b = a;
    while (b < by_stop.size() && stops[static_cast<size_t>(by_stop[b])][j] == stop) ++b;
    for (; done < stop; ++done) {
      if (cancel && cancel->load(std::memory_order_relaxed)) throw Cancelled();
      solver.step();
    }
    const std::vector<double>& played = solver.played_policy();
    StopGroup group;
    group.members.assign(by_stop.begin() + static_cast<std::ptrdiff_t>(a), by_stop.begin() + static_cast<std::ptrdiff_t>(b));
    for (int m : group.members) {
      std::vector<double>& policy = (*policies)[static_cast<size_t>(m)];
      for (int s : t.decision_nodes) {
        for (int c = t.first_child[s]; c < t.first_child[s] + t.num_children[s]; ++c) {
          std::copy(&played[static_cast<size_t>(c) * H], &played[static_cast<size_t>(c) * H] + H,
                    &policy[static_cast<size_t>(sg.to_full[c]) * H]);
        }
      }
    }
    if (!t.pseudo_leaves.empty()) group.leaf_beliefs = leaf_beliefs(sg, solver, played, true);
    groups.push_back(std::move(group));
    a = b;
  }
  return groups;
}

void TestTimeSearch::descend(int full_node, const StopGroup& group, const std::vector<std::vector<int>>& stops,
                             std::vector<std::vector<double>>* policies, const CancelFlag* cancel) const {
  const Subgame& sg = *subgames_.at(full_node);
  const PublicTree& t = *sg.tree;
  const int H = game_->num_hands();
  for (size_t i = 0; i < t.pseudo_leaves.size(); ++i) {
    // As search(): after a deal the leaf's normalised beliefs are already Bayes' rule for the card.
    const double* b = &group.leaf_beliefs[i * 2 * H];
    Beliefs next{std::vector<double>(b, b + H), std::vector<double>(b + H, b + 2 * H)};
    if (!sg.leaf_possible.empty()) keep_possible(sg.leaf_possible[i], &next);
    const int child = sg.to_full[t.pseudo_leaves[i]];
    for (const StopGroup& below : solve_for_members(child, next, group.members, stops, policies, cancel)) {
      descend(child, below, stops, policies, cancel);
    }
  }
}

namespace {

// Reach-weighted contribution of one policy: policy[c, h] times the acting player's own
// reach (prior included) at parent(c). Summing these and normalising per (node, hand)
// gives the behavioural policy of "pick one of the policies at random, then follow it".
std::vector<double> reach_weighted(const Game& game, const PublicTree& tree, const std::vector<double>& policy) {
  const int H = game.num_hands();
  std::array<std::vector<double>, 2> reach;
  for (int p = 0; p < 2; ++p) compute_reach(tree, H, policy, p, game.hand_prior().data(), &reach[p]);
  std::vector<double> out(policy.size(), 0.0);
  for (int n : tree.decision_nodes) {
    const double* r = &reach[tree.player[n]][static_cast<size_t>(n) * H];
    for (int c = tree.first_child[n]; c < tree.first_child[n] + tree.num_children[n]; ++c) {
      for (int h = 0; h < H; ++h) out[static_cast<size_t>(c) * H + h] = r[h] * policy[static_cast<size_t>(c) * H + h];
    }
  }
  return out;
}

}  // namespace

namespace {

// Computes the reach-weighted contributions of samples k in [begin, end) on `threads`
// threads and hands them to `merge(k, contribution)` in the order k = begin, begin + 1, ...
// (on the calling thread), so that sums and their rounding do not depend on timing. The
// samples are computed in chunks (TestTimeSearch::sampled_policies, which shares the solves
// of samples that reach a subgame with the same PBS) of search.samples_per_chunk() samples.
void for_each_sample_in_order(const TestTimeSearch& search, int begin, int end, int threads, uint64_t seed,
                              const CancelFlag* cancel, std::atomic<long>* progress,
                              const std::function<void(int, const std::vector<double>&)>& merge) {
  if (begin < 0 || end < begin) {
    throw std::invalid_argument("sample range must satisfy 0 <= begin <= end, got [" + std::to_string(begin) + ", " +
                                std::to_string(end) + ")");
  }
  if (threads < 1) throw std::invalid_argument("threads must be >= 1, got " + std::to_string(threads));
  const Game& game = search.game();
  const PublicTree& tree = search.full_tree();
  const int chunk = search.samples_per_chunk();
  for (int first = begin; first < end; first += chunk) {
    const int last = std::min(end, first + chunk);
    std::vector<uint64_t> seeds;
    for (int k = first; k < last; ++k) seeds.push_back(mix_seed(seed, static_cast<uint64_t>(k)));
    std::vector<std::vector<double>> policies = search.sampled_policies(seeds, threads, cancel, progress);
    parallel_for(policies.size(), threads, [&](size_t i) {
      if (cancel && cancel->load(std::memory_order_relaxed)) throw Cancelled();
      policies[i] = reach_weighted(game, tree, policies[i]);
    });
    for (int k = first; k < last; ++k) merge(k, policies[static_cast<size_t>(k - first)]);
  }
  if (cancel && cancel->load()) throw Cancelled();
}

void add_into(std::vector<double>* sum, const std::vector<double>& contribution) {
  for (size_t i = 0; i < sum->size(); ++i) (*sum)[i] += contribution[i];
}

}  // namespace

MixtureEvaluation evaluate_mixture_sum(const Game& game, const PublicTree& tree, const std::vector<double>& sum) {
  if (sum.size() != static_cast<size_t>(tree.size()) * game.num_hands()) {
    throw std::invalid_argument("a mixture sum needs " + std::to_string(tree.size()) + " x " +
                                std::to_string(game.num_hands()) + " entries, got " + std::to_string(sum.size()));
  }
  MixtureEvaluation out;
  normalize_policy(tree, game.num_hands(), sum, &out.policy);
  const ExploitabilityReport report = exploitability(game, tree, out.policy);
  out.exploitability = report.exploitability;
  out.br_values = report.br_values;
  return out;
}

SampledEvaluation evaluate_sampled(const TestTimeSearch& search, int num_policies, int threads, uint64_t seed,
                                   const CancelFlag* cancel, std::atomic<long>* progress) {
  if (num_policies < 1) throw std::invalid_argument("num_policies must be >= 1, got " + std::to_string(num_policies));
  const Game& game = search.game();
  const PublicTree& tree = search.full_tree();
  SampledEvaluation result;
  std::vector<double> sum(static_cast<size_t>(tree.size()) * game.num_hands(), 0.0);
  MixtureEvaluation last;
  for_each_sample_in_order(search, 0, num_policies, threads, seed, cancel, progress,
                           [&](int k, const std::vector<double>& contribution) {
                             add_into(&sum, contribution);
                             const int merged = k + 1;
                             const bool power_of_two = (merged & (merged - 1)) == 0;
                             if (power_of_two || merged == num_policies) {
                               last = evaluate_mixture_sum(game, tree, sum);
                               result.num_policies.push_back(merged);
                               result.exploitability.push_back(last.exploitability);
                               result.br_values.push_back(last.br_values);
                             }
                           });
  result.average_policy = std::move(last.policy);
  return result;
}

std::vector<double> sampled_contribution_sum(const TestTimeSearch& search, int begin, int end, int threads,
                                             uint64_t seed, const CancelFlag* cancel, std::atomic<long>* progress) {
  std::vector<double> sum(static_cast<size_t>(search.full_tree().size()) * search.game().num_hands(), 0.0);
  for_each_sample_in_order(search, begin, end, threads, seed, cancel, progress,
                           [&](int, const std::vector<double>& contribution) { add_into(&sum, contribution); });
  return sum;
}

}  // namespace rebel
