#include "core/solver.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/tree_ops.h"
#include "nets/simd.h"

namespace rebel {

SolverKind parse_solver_kind(const std::string& name) {
  if (name == "cfr") return SolverKind::kCfr;
  if (name == "lcfr" || name == "linear_cfr") return SolverKind::kLinearCfr;
  if (name == "cfr+" || name == "cfrplus" || name == "cfr_plus") return SolverKind::kCfrPlus;
  if (name == "dcfr") return SolverKind::kDcfr;
  if (name == "fp") return SolverKind::kFp;
  if (name == "lfp" || name == "linear_fp") return SolverKind::kLinearFp;
  throw std::invalid_argument("unknown solver '" + name + "'; choose one of cfr, lcfr, cfr+, dcfr, fp, lfp");
}

std::string solver_kind_name(SolverKind kind) {
  switch (kind) {
    case SolverKind::kCfr: return "cfr";
    case SolverKind::kLinearCfr: return "lcfr";
    case SolverKind::kCfrPlus: return "cfr+";
    case SolverKind::kDcfr: return "dcfr";
    case SolverKind::kFp: return "fp";
    case SolverKind::kLinearFp: return "lfp";
  }
  return "?";
}

void normalize_beliefs(const double* in, int H, double* out) {
  double total = 0.0;
  for (int h = 0; h < H; ++h) total += in[h];
  if (total > 0.0) {
    for (int h = 0; h < H; ++h) out[h] = in[h] / total;
  } else {
    for (int h = 0; h < H; ++h) out[h] = 1.0 / H;
  }
}

std::vector<double> checked_beliefs(const std::vector<double>& beliefs, int H, const char* what) {
  if (static_cast<int>(beliefs.size()) != H) {
    std::ostringstream msg;
    msg << what << " has length " << beliefs.size() << ", expected " << H << " (one per hand)";
    throw std::invalid_argument(msg.str());
  }
  double total = 0.0;
  for (int h = 0; h < H; ++h) {
    if (!std::isfinite(beliefs[h]) || beliefs[h] < 0.0) {
      std::ostringstream msg;
      msg << what << "[" << h << "] = " << beliefs[h] << "; beliefs must be finite and non-negative";
      throw std::invalid_argument(msg.str());
    }
    total += beliefs[h];
  }
  if (!(total > 0.0)) throw std::invalid_argument(std::string(what) + " has zero total mass");
  std::vector<double> out(H);
  for (int h = 0; h < H; ++h) out[h] = beliefs[h] / total;
  return out;
}

SubgameSolver::SubgameSolver(GamePtr game, std::shared_ptr<const PublicTree> tree, Beliefs root_reach,
                             SolverParams params, ValueNetPtr net)
    : game_(std::move(game)), tree_(std::move(tree)), params_(params), net_(std::move(net)) {
  if (!game_ || !tree_) throw std::invalid_argument("SubgameSolver: game and tree are required");
  H_ = game_->num_hands();
  for (int p = 0; p < 2; ++p) {
    root_reach_[p] = checked_beliefs(root_reach[p], H_, p == 0 ? "beliefs of player 0" : "beliefs of player 1");
  }
  if (!tree_->pseudo_leaves.empty() && !net_) {
    throw std::invalid_argument("the subgame has " + std::to_string(tree_->pseudo_leaves.size()) +
                                " pseudo-leaves: a value net is required (or remove the depth limit)");
  }
  const size_t cells = static_cast<size_t>(tree_->size()) * H_;
  current_ = uniform_policy(*game_, *tree_);
  average_ = current_;
  regrets_.assign(cells, 0.0);
  scratch_.assign(H_, 0.0);
  values_.assign(cells, 0.0);
  // The uniform policy enters the average once, weighted by each player's own reach.
  sum_.assign(cells, 0.0);
  for (int p = 0; p < 2; ++p) {
    compute_reach(*tree_, H_, current_, p, root_reach_[p].data(), &reach_[p]);
    for (int n : tree_->decision_nodes) {
      if (tree_->player[n] != p) continue;
      for (int c = tree_->first_child[n]; c < tree_->first_child[n] + tree_->num_children[n]; ++c) {
        for (int h = 0; h < H_; ++h) sum_[static_cast<size_t>(c) * H_ + h] = reach_[p][static_cast<size_t>(n) * H_ + h] * current_[static_cast<size_t>(c) * H_ + h];
      }
    }
  }
  for (int p = 0; p < 2; ++p) {
    root_values_mean_[p].assign(H_, 0.0);
    root_values_last_[p].assign(H_, 0.0);
  }
  // Pseudo-leaf query rows: the header and features never change, beliefs do. Each
  // iteration copies the rows of the leaves it queries into a dense batch.
  const int L = static_cast<int>(tree_->pseudo_leaves.size());
  if (L > 0) {
    const int row = query_size(*game_);
    leaf_rows_.assign(static_cast<size_t>(L) * row, 0.0f);
    query_rows_.assign(static_cast<size_t>(L) * row, 0.0f);
    query_beliefs_.assign(static_cast<size_t>(L) * 2 * H_, 0.0);
    leaf_out_.assign(static_cast<size_t>(L) * H_, 0.0);
    queried_leaves_.reserve(L);
    batch_.row_size = row;
    batch_.rows = query_rows_.data();
    batch_.queried_player.reserve(L);
    batch_.histories.reserve(L);
    batch_.beliefs0.reserve(L);
    batch_.beliefs1.reserve(L);
    for (int i = 0; i < L; ++i) {
      const int n = tree_->pseudo_leaves[i];
      float* r = &leaf_rows_[static_cast<size_t>(i) * row];
      r[0] = static_cast<float>(tree_->player[n]);
      game_->public_features(tree_->history[n], r + 2);
    }
  }
}

bool SubgameSolver::is_fp() const {
  return params_.kind == SolverKind::kFp || params_.kind == SolverKind::kLinearFp;
}

void SubgameSolver::run(int iterations) {
  if (iterations < 0) throw std::invalid_argument("iterations must be >= 0, got " + std::to_string(iterations));
  for (int i = 0; i < iterations; ++i) step();
}

void SubgameSolver::step() {
  const int player = num_steps() % 2;
  if (is_fp()) fp_step(player);
  else cfr_step(player);
}

// Terminal values from the opponent's reach; pseudo-leaf values from the net, queried
// with both players' normalised reaches (reach_ must hold the policy being evaluated)
// and scaled by the opponent's mass.
void SubgameSolver::compute_leaf_values(int player) {
  const int opp = 1 - player;
  fill_terminal_values(*game_, *tree_, player, reach_[opp], &values_);
  const int L = static_cast<int>(tree_->pseudo_leaves.size());
  if (L == 0) return;
  const int row = batch_.row_size;
  const int F = game_->feature_size();

  // A leaf the opponent reaches with zero mass has value exactly 0 for `player` (the net's
  // values are scaled by that mass), so it is not queried: regret matching plays many
  // actions with probability exactly 0, and the net is nearly all of a subgame's cost.
  queried_leaves_.clear();
  batch_.queried_player.clear();
  batch_.histories.clear();
  batch_.beliefs0.clear();
  batch_.beliefs1.clear();
  for (int i = 0; i < L; ++i) {
    const size_t n = static_cast<size_t>(tree_->pseudo_leaves[i]);
    double mass = 0.0;
    for (int h = 0; h < H_; ++h) mass += reach_[opp][n * H_ + h];
    if (!(mass > 0.0)) {
      for (int h = 0; h < H_; ++h) values_[n * H_ + h] = 0.0;
      continue;
    }
    const size_t j = queried_leaves_.size();
    queried_leaves_.push_back({static_cast<int>(n), mass});
    float* r = &query_rows_[j * row];
    std::copy_n(&leaf_rows_[static_cast<size_t>(i) * row], row, r);
    r[1] = static_cast<float>(player);
    double* b = &query_beliefs_[j * 2 * H_];
    for (int p = 0; p < 2; ++p) {
      normalize_beliefs(&reach_[p][n * H_], H_, b + p * H_);
      for (int h = 0; h < H_; ++h) r[2 + F + p * H_ + h] = static_cast<float>(b[p * H_ + h]);
    }
    batch_.queried_player.push_back(player);
    batch_.histories.push_back(&tree_->history[n]);
    batch_.beliefs0.push_back(b);
    batch_.beliefs1.push_back(b + H_);
  }
  batch_.size = static_cast<int>(queried_leaves_.size());
  leaf_queries_ += batch_.size;
  leaf_queries_skipped_ += L - batch_.size;
  if (batch_.size == 0) return;
  net_->compute_values(batch_, leaf_out_.data());
  for (int j = 0; j < batch_.size; ++j) {
    const auto [n, mass] = queried_leaves_[j];
    for (int h = 0; h < H_; ++h)
      values_[static_cast<size_t>(n) * H_ + h] = mass * leaf_out_[static_cast<size_t>(j) * H_ + h];
  }
}

void SubgameSolver::update_root_mean(int player, int update_index) {
  const bool uniform_average = params_.kind == SolverKind::kCfr || params_.kind == SolverKind::kFp;
  const double alpha = uniform_average ? 1.0 / update_index : 2.0 / (update_index + 1);
  auto& mean = root_values_mean_[player];
  auto& last = root_values_last_[player];
  for (int h = 0; h < H_; ++h) {
    last[h] = values_[h];
    mean[h] += (values_[h] - mean[h]) * alpha;
  }
}

namespace {

// Hand loops are written once, for a hand count fixed at compile time (kHands > 0: fully
// unrolled, which pays off for the handful of hands of the paper's games) or known at run
// time (kHands == 0). Every variant does the same arithmetic in the same order, so results
// are bit-identical whichever one runs.
#define REBEL_ALWAYS_INLINE inline __attribute__((always_inline))

// One child of a node of the updating player, all hands: the regret-matching probability
// (division by the positive-regret total so a lone positive regret gives exactly 1), the
// discounted regret, the reach and the discounted average sum. Branch-free.
template <int kHands>
REBEL_ALWAYS_INLINE void regret_match_child_body(int hands, double uniform, double pos, double neg, double strat,
                                                 const double* __restrict total,
                                                 const double* __restrict parent_reach, double* __restrict regret,
                                                 double* __restrict current, double* __restrict reach,
                                                 double* __restrict sum) {
  const int H = kHands > 0 ? kHands : hands;
  for (int h = 0; h < H; ++h) {
    const double r = regret[h];
    const double positive = r > 0.0 ? r : 0.0;
    const double p = total[h] > 0.0 ? positive / total[h] : uniform;
    current[h] = p;
    regret[h] = r * (r > 0.0 ? pos : neg);
    const double reached = parent_reach[h] * p;
    reach[h] = reached;
    sum[h] = sum[h] * strat + reached;
  }
}

// One node of the bottom-up pass (children are contiguous, H values each): the node's value
// (policy-weighted for the updating player, summed for the opponent) and, for the updating
// player, each child's instantaneous regret.
template <int kHands>
REBEL_ALWAYS_INLINE void backup_node_body(int hands, int num_children, bool own, const double* __restrict policy,
                                          const double* __restrict child_values, double* __restrict value,
                                          double* __restrict regrets) {
  const int H = kHands > 0 ? kHands : hands;
  for (int h = 0; h < H; ++h) value[h] = 0.0;
  if (!own) {
    for (int k = 0; k < num_children; ++k) {
      const double* vc = child_values + static_cast<size_t>(k) * H;
      for (int h = 0; h < H; ++h) value[h] += vc[h];
    }
    return;
  }
  for (int k = 0; k < num_children; ++k) {
    const double* vc = child_values + static_cast<size_t>(k) * H;
    const double* p = policy + static_cast<size_t>(k) * H;
    for (int h = 0; h < H; ++h) value[h] += p[h] * vc[h];
  }
  for (int k = 0; k < num_children; ++k) {
    const double* vc = child_values + static_cast<size_t>(k) * H;
    double* r = regrets + static_cast<size_t>(k) * H;
    for (int h = 0; h < H; ++h) r[h] += vc[h] - value[h];
  }
}

// Run-time hand counts: one vectorised clone per CPU family.
REBEL_SIMD_CLONES void regret_match_child(int H, double uniform, double pos, double neg, double strat,
                                          const double* __restrict total, const double* __restrict parent_reach,
                                          double* __restrict regret, double* __restrict current,
                                          double* __restrict reach, double* __restrict sum) {
  regret_match_child_body<0>(H, uniform, pos, neg, strat, total, parent_reach, regret, current, reach, sum);
}

REBEL_SIMD_CLONES void backup_node(int H, int num_children, bool own, const double* __restrict policy,
                                   const double* __restrict child_values, double* __restrict value,
                                   double* __restrict regrets) {
  backup_node_body<0>(H, num_children, own, policy, child_values, value, regrets);
}

struct Discounts {
  double pos = 1.0, neg = 1.0, strat = 1.0;  // positive / negative regrets, average sum
  bool floor_regrets = false;                // CFR+
};

// The two passes of one CFR update of `player` over the whole tree.
template <int kHands>
struct CfrPasses {
  // Bottom-up values of the current iterate; instantaneous regrets added to `regrets`.
  static void backup(const PublicTree& t, int hands, int player, const double* current, double* values,
                     double* regrets) {
    const int H = kHands > 0 ? kHands : hands;
    for (auto it = t.decision_nodes.rbegin(); it != t.decision_nodes.rend(); ++it) {
      const int n = *it;
      const size_t begin = static_cast<size_t>(t.first_child[n]) * H;
      const bool own = t.player[n] == player;
      if constexpr (kHands > 0) {
        backup_node_body<kHands>(H, t.num_children[n], own, current + begin, values + begin,
                                 values + static_cast<size_t>(n) * H, regrets + begin);
      } else {
        backup_node(H, t.num_children[n], own, current + begin, values + begin, values + static_cast<size_t>(n) * H,
                    regrets + begin);
      }
    }
  }

  // One top-down pass: regret matching gives the new iterate, regrets are discounted, the
  // player's reach under the new iterate is propagated and folded into the average.
  static void update(const PublicTree& t, int hands, int player, const Discounts& d, double* reach,
                     double* regrets, double* current, double* sum, double* total) {
    const int H = kHands > 0 ? kHands : hands;
    for (int n : t.decision_nodes) {
      const int begin = t.first_child[n], end = begin + t.num_children[n];
      const double* rn = reach + static_cast<size_t>(n) * H;
      if (t.player[n] != player) {
        for (int c = begin; c < end; ++c) std::copy(rn, rn + H, reach + static_cast<size_t>(c) * H);
        continue;
      }
      // Hands innermost everywhere so the loops vectorise.
      const double uniform = 1.0 / (end - begin);
      std::fill(total, total + H, 0.0);
      for (int c = begin; c < end; ++c) {
        double* r = regrets + static_cast<size_t>(c) * H;
        if (d.floor_regrets) {
          for (int h = 0; h < H; ++h) r[h] = r[h] > 0.0 ? r[h] : 0.0;
        }
        for (int h = 0; h < H; ++h) total[h] += r[h] > 0.0 ? r[h] : 0.0;
      }
      for (int c = begin; c < end; ++c) {
        const size_t i = static_cast<size_t>(c) * H;
        if constexpr (kHands > 0) {
          regret_match_child_body<kHands>(H, uniform, d.pos, d.neg, d.strat, total, rn, regrets + i, current + i,
                                          reach + i, sum + i);
        } else {
          regret_match_child(H, uniform, d.pos, d.neg, d.strat, total, rn, regrets + i, current + i, reach + i,
                             sum + i);
        }
      }
    }
  }
};

// Calls `F<k>::run(args...)` with k = H for the small hand counts, else k = 0.
template <template <int> class F, typename... Args>
void with_hands(int H, Args&&... args) {
  switch (H) {
    case 2: return F<2>::run(args...);
    case 3: return F<3>::run(args...);
    case 4: return F<4>::run(args...);
    case 5: return F<5>::run(args...);
    case 6: return F<6>::run(args...);
    case 7: return F<7>::run(args...);
    case 8: return F<8>::run(args...);
    case 9: return F<9>::run(args...);
    default: return F<0>::run(args...);
  }
}

template <int kHands>
struct RunBackup {
  template <typename... Args>
  static void run(Args&&... args) { CfrPasses<kHands>::backup(args...); }
};
template <int kHands>
struct RunUpdate {
  template <typename... Args>
  static void run(Args&&... args) { CfrPasses<kHands>::update(args...); }
};

}  // namespace

void SubgameSolver::cfr_step(int player) {
  const PublicTree& t = *tree_;
  const int H = H_;
  // Invariant: reach_[p] holds p's reach under current_ (set by the constructor and by
  // the fused pass at the end of each of p's updates), so no reach pass is needed here.
  compute_leaf_values(player);
  with_hands<RunBackup>(H, t, H, player, current_.data(), values_.data(), regrets_.data());
  const int t_update = ++steps_[player];
  update_root_mean(player, t_update);

  // Discounts applied after this update (t = number of policies already in the average).
  Discounts d;
  const double tt = t_update;
  switch (params_.kind) {
    case SolverKind::kLinearCfr: d.pos = d.neg = d.strat = tt / (tt + 1.0); break;
    case SolverKind::kCfrPlus: d.strat = tt / (tt + 1.0); break;
    case SolverKind::kDcfr: {
      const double a = std::pow(tt, params_.dcfr_alpha), b = std::pow(tt, params_.dcfr_beta);
      d.pos = a / (a + 1.0);
      d.neg = b / (b + 1.0);
      d.strat = std::pow(tt / (tt + 1.0), params_.dcfr_gamma);
      break;
    }
    default: break;
  }
  d.floor_regrets = params_.kind == SolverKind::kCfrPlus;
  with_hands<RunUpdate>(H, t, H, player, d, reach_[player].data(), regrets_.data(), current_.data(), sum_.data(),
                        scratch_.data());
  average_stale_ = true;
}

const std::vector<double>& SubgameSolver::average_policy() const {
  if (average_stale_) {
    normalize_policy(*tree_, H_, sum_, &average_);
    average_stale_ = false;
  }
  return average_;
}

void SubgameSolver::fp_step(int player) {
  const PublicTree& t = *tree_;
  const int H = H_;
  // Best response of `player` to the opponent's current average (leaf values too).
  for (int p = 0; p < 2; ++p) compute_reach(t, H, average_, p, root_reach_[p].data(), &reach_[p]);
  compute_leaf_values(player);
  backup_best_response(t, H, player, &values_, &best_child_);
  const int t_update = ++steps_[player];
  update_root_mean(player, t_update);
  const double strat = params_.kind == SolverKind::kLinearFp ? t_update / (t_update + 1.0) : 1.0;

  // Reach of `player` under the best response, then fold the BR into the average.
  std::vector<double>& br_reach = reach_[player];
  br_reach.assign(static_cast<size_t>(t.size()) * H, 0.0);
  std::copy(root_reach_[player].begin(), root_reach_[player].end(), br_reach.begin());
  for (int n : t.decision_nodes) {
    const int begin = t.first_child[n], end = begin + t.num_children[n];
    const double* rn = &br_reach[static_cast<size_t>(n) * H];
    if (t.player[n] != player) {
      for (int c = begin; c < end; ++c) std::copy(rn, rn + H, &br_reach[static_cast<size_t>(c) * H]);
      continue;
    }
    const int* best = &best_child_[static_cast<size_t>(n) * H];
    for (int c = begin; c < end; ++c) {
      double* s = &sum_[static_cast<size_t>(c) * H];
      double* rc = &br_reach[static_cast<size_t>(c) * H];
      for (int h = 0; h < H; ++h) {
        const double played = best[h] == c ? rn[h] : 0.0;
        rc[h] = played;
        s[h] = s[h] * strat + played;
      }
    }
    for (int h = 0; h < H; ++h) {
      double tot = 0.0;
      for (int c = begin; c < end; ++c) {
        tot += sum_[static_cast<size_t>(c) * H + h];
        if (params_.optimistic) tot += br_reach[static_cast<size_t>(c) * H + h];
      }
      for (int c = begin; c < end; ++c) {
        double w = sum_[static_cast<size_t>(c) * H + h];
        if (params_.optimistic) w += br_reach[static_cast<size_t>(c) * H + h];
        average_[static_cast<size_t>(c) * H + h] = tot > 0.0 ? w / tot : 1.0 / (end - begin);
      }
    }
  }
}

}  // namespace rebel
