#include "solvers/mccfr.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rebel {
namespace {

// Above this many (terminal, h0, h1) entries payoffs are computed on demand instead of
// being tabulated up front (32 MiB of doubles).
constexpr double kMaxUtilityTable = 1 << 22;

// First index whose cumulative weight exceeds `target`, skipping zero-weight entries
// even when rounding pushes `target` up to the total.
int pick_from_cdf(const std::vector<double>& cdf, double target) {
  const auto it = std::upper_bound(cdf.begin(), cdf.end(), target);
  int i = static_cast<int>(it - cdf.begin());
  if (i == static_cast<int>(cdf.size())) {
    i = static_cast<int>(cdf.size()) - 1;
    while (i > 0 && cdf[i] == cdf[i - 1]) --i;
  }
  return i;
}

// Regret matching at one information set: the strategy over children [begin, end) for
// `hand`, proportional to the positive regrets (uniform when none is positive).
void regret_matching(const std::vector<double>& regrets, int H, int begin, int end, int hand, double* out) {
  double positive = 0.0;
  for (int c = begin; c < end; ++c) positive += std::max(regrets[static_cast<size_t>(c) * H + hand], 0.0);
  for (int c = begin; c < end; ++c) {
    out[c - begin] = positive > 0.0 ? std::max(regrets[static_cast<size_t>(c) * H + hand], 0.0) / positive
                                    : 1.0 / (end - begin);
  }
}

}  // namespace

// Player 0's payoff u_0(h0, h1, z) at a terminal node. The game only exposes
// counterfactual values, which are linear in the opponent's reach: a one-hot reach on h1
// gives w(h0, h1) * u_0(h0, h1, z) for every h0.
class MccfrSolver::DealUtility {
 public:
  DealUtility(const Game& game, const PublicTree& tree)
      : game_(game), tree_(tree), H_(game.num_hands()), slot_(tree.size(), -1), one_hot_(H_, 0.0), out_(H_) {
    for (size_t i = 0; i < tree.terminal_nodes.size(); ++i) slot_[tree.terminal_nodes[i]] = static_cast<int>(i);
    const double entries = static_cast<double>(tree.terminal_nodes.size()) * H_ * H_;
    if (entries > kMaxUtilityTable) return;
    table_.resize(static_cast<size_t>(entries));
    for (int node : tree.terminal_nodes) {
      for (int h1 = 0; h1 < H_; ++h1) {
        compute(node, h1);
        std::copy(out_.begin(), out_.end(), table_.begin() + index(node, 0, h1));
      }
    }
  }

  // Requires hand_pair_weight(h0, h1) > 0 (a deal that can occur).
  double operator()(int node, int h0, int h1) {
    if (!table_.empty()) return table_[index(node, h0, h1)];
    compute(node, h1);
    return out_[h0];
  }

 private:
  size_t index(int node, int h0, int h1) const {
    return (static_cast<size_t>(slot_[node]) * H_ + h1) * H_ + h0;
  }

  // out_[h0] = u_0(h0, h1, z) for every h0 (0 where the deal is impossible).
  void compute(int node, int h1) {
    one_hot_[h1] = 1.0;
    game_.terminal_values(tree_.history[node], 0, one_hot_.data(), out_.data());
    one_hot_[h1] = 0.0;
    for (int h0 = 0; h0 < H_; ++h0) {
      const double w = game_.hand_pair_weight(h0, h1);
      out_[h0] = w > 0.0 ? out_[h0] / w : 0.0;
    }
  }

  const Game& game_;
  const PublicTree& tree_;
  int H_;
  std::vector<int> slot_;  // node -> index among the terminals
  std::vector<double> table_;  // [terminal][h1][h0], empty when too large
  std::vector<double> one_hot_, out_;
};

MccfrSolver::MccfrSolver(GamePtr game, std::shared_ptr<const PublicTree> tree, uint64_t seed)
    : game_(std::move(game)), tree_(std::move(tree)), seed_(seed), rng_(seed) {
  if (!game_ || !tree_) throw std::invalid_argument("MccfrSolver needs a game and a tree");
  if (!tree_->root_history().empty() || !tree_->pseudo_leaves.empty()) {
    throw std::invalid_argument("MCCFR needs the full game tree (no root history, no depth limit)");
  }
  check_tree_game(*game_, *tree_);
  H_ = game_->num_hands();
  const size_t cells = static_cast<size_t>(tree_->size()) * H_;
  regrets_.assign(cells, 0.0);
  strategy_sum_.assign(cells, 0.0);
  const size_t n = static_cast<size_t>(tree_->size());
  reach0_.assign(n, 0.0);
  reach1_.assign(n, 0.0);
  sigma_.assign(n, 0.0);
  value_.assign(n, 0.0);
  prior_cdf_.resize(H_);
  double total = 0.0;
  for (int h = 0; h < H_; ++h) prior_cdf_[h] = (total += game_->hand_prior()[h]);
  utility_ = std::make_unique<DealUtility>(*game_, *tree_);
}

MccfrSolver::~MccfrSolver() = default;

void MccfrSolver::run(long iterations) {
  if (iterations < 0) throw std::invalid_argument("iterations must be >= 0, got " + std::to_string(iterations));
  for (long i = 0; i < iterations; ++i) iterate();
}

double MccfrSolver::uniform01() {
  // 53 random bits -> [0, 1); unlike std::uniform_real_distribution this is the same on
  // every standard library, so a seed reproduces the same run everywhere.
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

std::pair<int, int> MccfrSolver::sample_deal() {
  const int h0 = pick_from_cdf(prior_cdf_, uniform01() * prior_cdf_.back());
  if (game_->hands_independent()) return {h0, pick_from_cdf(prior_cdf_, uniform01() * prior_cdf_.back())};
  // P(h1 | h0) is proportional to prior(h1) * w(h0, h1).
  const std::vector<double>& prior = game_->hand_prior();
  double total = 0.0;
  for (int h1 = 0; h1 < H_; ++h1) total += prior[h1] * game_->hand_pair_weight(h0, h1);
  const double target = uniform01() * total;
  double cumulative = 0.0;
  int last_possible = -1;
  for (int h1 = 0; h1 < H_; ++h1) {
    const double p = prior[h1] * game_->hand_pair_weight(h0, h1);
    if (p <= 0.0) continue;
    cumulative += p;
    last_possible = h1;
    if (cumulative > target) return {h0, h1};
  }
  if (last_possible < 0) throw std::logic_error("no opponent hand can be dealt next to hand " + std::to_string(h0));
  return {h0, last_possible};
}

void MccfrSolver::sample_outcome(int node, int h0, int h1) {
  const PublicTree& t = *tree_;
  const int begin = t.first_child[node], k = t.num_children[node];
  const double* f = t.chance_factors_at(node);
  double total = 0.0;
  for (int i = 0; i < k; ++i) total += f[static_cast<size_t>(i) * H_ + h0] * f[static_cast<size_t>(i) * H_ + h1];
  if (!(total > 0.0)) throw std::logic_error("no chance outcome is possible for the sampled deal");
  const double target = uniform01() * total;
  double cumulative = 0.0;
  int chosen = -1, last_possible = -1;
  for (int i = 0; i < k; ++i) {
    const double q = f[static_cast<size_t>(i) * H_ + h0] * f[static_cast<size_t>(i) * H_ + h1];
    sigma_[begin + i] = 0.0;
    if (q <= 0.0 || chosen >= 0) continue;
    last_possible = i;
    cumulative += q;
    if (cumulative > target) chosen = i;
  }
  sigma_[begin + (chosen >= 0 ? chosen : last_possible)] = 1.0;  // rounding at the top: the last possible
}

void MccfrSolver::iterate() {
  const PublicTree& t = *tree_;
  const auto [h0, h1] = sample_deal();
  const int hand[2] = {h0, h1};

  // Forward pass (parents before children): regret-matching strategies and reaches. At a
  // public chance node one outcome is sampled from P(b | h0, h1) = f_b(h0) f_b(h1) and
  // played with probability 1 (chance sampling: the sampling probability cancels the
  // chance probability), the others with 0.
  reach0_[0] = reach1_[0] = 1.0;
  for (int n : t.internal_nodes) {
    const int p = t.player[n];
    const int begin = t.first_child[n], end = begin + t.num_children[n];
    if (p == kChancePlayer) {
      sample_outcome(n, h0, h1);
      for (int c = begin; c < end; ++c) reach0_[c] = reach0_[n] * sigma_[c], reach1_[c] = reach1_[n] * sigma_[c];
      continue;
    }
    const int h = hand[p];
    regret_matching(regrets_, H_, begin, end, h, &sigma_[begin]);
    for (int c = begin; c < end; ++c) {
      reach0_[c] = reach0_[n] * (p == 0 ? sigma_[c] : 1.0);
      reach1_[c] = reach1_[n] * (p == 1 ? sigma_[c] : 1.0);
    }
  }

  // Backward pass (children before parents): values for player 0 and table updates.
  for (int n = t.size() - 1; n >= 0; --n) {
    if (t.kind[n] == NodeKind::kTerminal) {
      value_[n] = (*utility_)(n, h0, h1);
      continue;
    }
    const int p = t.player[n];
    const int begin = t.first_child[n], end = begin + t.num_children[n];
    double v = 0.0;
    for (int c = begin; c < end; ++c) v += sigma_[c] * value_[c];
    value_[n] = v;
    if (p == kChancePlayer) continue;
    const int h = hand[p];
    const double own = p == 0 ? reach0_[n] : reach1_[n];
    const double opp = p == 0 ? reach1_[n] : reach0_[n];
    const double sign = p == 0 ? 1.0 : -1.0;  // player 1's payoff is -value
    for (int c = begin; c < end; ++c) {
      const size_t i = static_cast<size_t>(c) * H_ + h;
      regrets_[i] += sign * opp * (value_[c] - v);
      strategy_sum_[i] += own * sigma_[c];
    }
  }
  ++iterations_;
}

std::vector<double> MccfrSolver::average_policy() const {
  const PublicTree& t = *tree_;
  std::vector<double> policy(static_cast<size_t>(t.size()) * H_, 0.0);
  for (int n : t.decision_nodes) {
    const int begin = t.first_child[n], end = begin + t.num_children[n];
    for (int h = 0; h < H_; ++h) {
      double total = 0.0;
      for (int c = begin; c < end; ++c) total += strategy_sum_[static_cast<size_t>(c) * H_ + h];
      for (int c = begin; c < end; ++c) {
        const size_t i = static_cast<size_t>(c) * H_ + h;
        policy[i] = total > 0.0 ? strategy_sum_[i] / total : 1.0 / t.num_children[n];
      }
    }
  }
  return policy;
}

std::vector<double> MccfrSolver::current_policy() const {
  const PublicTree& t = *tree_;
  std::vector<double> policy(static_cast<size_t>(t.size()) * H_, 0.0);
  std::vector<double> strategy;
  for (int n : t.decision_nodes) {
    const int begin = t.first_child[n], end = begin + t.num_children[n];
    strategy.resize(end - begin);
    for (int h = 0; h < H_; ++h) {
      regret_matching(regrets_, H_, begin, end, h, strategy.data());
      for (int c = begin; c < end; ++c) policy[static_cast<size_t>(c) * H_ + h] = strategy[c - begin];
    }
  }
  return policy;
}

}  // namespace rebel
