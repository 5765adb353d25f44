#include "solvers/subgame_solver.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "core/tree_ops.h"
#include "util/simd.h"

namespace rebel {

namespace {
// Regret order of a node never updated; orders saturate one below it.
constexpr uint16_t kNeverUpdated = 0xFFFF;
constexpr uint16_t kMaxOrder = 0xFFFE;
}  // namespace

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

OffPath parse_off_path(const std::string& name) {
  if (name == "skip") return OffPath::kSkip;
  if (name == "floor") return OffPath::kFloor;
  if (name == "conditional") return OffPath::kConditional;
  throw std::invalid_argument("unknown off-path mode '" + name + "'; choose one of skip, floor, conditional");
}

std::string off_path_name(OffPath mode) {
  switch (mode) {
    case OffPath::kSkip: return "skip";
    case OffPath::kFloor: return "floor";
    case OffPath::kConditional: return "conditional";
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

void normalize_reach(const double* coef, const uint16_t* order, int H, OffPath mode, double* out) {
  if (mode == OffPath::kSkip) {
    normalize_beliefs(coef, H, out);
    return;
  }
  uint16_t lowest = order[0];
  for (int h = 1; h < H; ++h) lowest = std::min(lowest, order[h]);
  if (mode == OffPath::kFloor && lowest == 1) {
    // (x + eps) / sum(x + eps) with x = coef * eps (order 1) or o(eps) (order 2 and more).
    double total = 0.0;
    for (int h = 0; h < H; ++h) total += (order[h] == 1 ? coef[h] : 0.0) + 1.0;
    for (int h = 0; h < H; ++h) out[h] = ((order[h] == 1 ? coef[h] : 0.0) + 1.0) / total;
    return;
  }
  double total = 0.0;
  if (mode == OffPath::kConditional || lowest == 0) {
    for (int h = 0; h < H; ++h) total += order[h] == lowest ? coef[h] : 0.0;
  }
  if (total > 0.0) {
    for (int h = 0; h < H; ++h) out[h] = order[h] == lowest ? coef[h] / total : 0.0;
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
  double total = 0.0, largest = 0.0;
  for (int h = 0; h < H; ++h) {
    if (!std::isfinite(beliefs[h]) || beliefs[h] < 0.0) {
      std::ostringstream msg;
      msg << what << "[" << h << "] = " << beliefs[h] << "; beliefs must be finite and non-negative";
      throw std::invalid_argument(msg.str());
    }
    total += beliefs[h];
    largest = std::max(largest, beliefs[h]);
  }
  if (!(total > 0.0)) throw std::invalid_argument(std::string(what) + " has zero total mass");
  std::vector<double> out(H);
  // Finite entries can sum to inf (e.g. 1e308 each): normalise the entries scaled by the
  // largest one instead, which sums to at most H.
  const double scale = std::isinf(total) ? largest : 1.0;
  if (scale != 1.0) {
    total = 0.0;
    for (int h = 0; h < H; ++h) total += beliefs[h] / scale;
  }
  for (int h = 0; h < H; ++h) out[h] = beliefs[h] / scale / total;
  return out;
}

SubgameSolver::SubgameSolver(GamePtr game, std::shared_ptr<const PublicTree> tree, Beliefs root_reach,
                             SolverParams params, ValueNetPtr net)
    : game_(std::move(game)), tree_(std::move(tree)), params_(params), net_(std::move(net)) {
  if (!game_ || !tree_) throw std::invalid_argument("SubgameSolver: game and tree are required");
  check_tree_game(*game_, *tree_);
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
  const bool orders = params_.off_path != OffPath::kSkip && !is_fp();
  for (int p = 0; p < 2; ++p) {
    if (!orders) {
      compute_reach(*tree_, H_, current_, p, root_reach_[p].data(), &reach_[p]);
    } else {
      // A hand the beliefs exclude is reached at order 1 (coefficient 1); the uniform
      // policy plays every action, so every node keeps the root's orders.
      std::vector<double> root = root_reach_[p];
      std::vector<uint16_t> root_order(H_, 0);
      for (int h = 0; h < H_; ++h) {
        if (root[h] > 0.0) continue;
        root[h] = 1.0;
        root_order[h] = 1;
      }
      compute_reach(*tree_, H_, current_, p, root.data(), &reach_[p]);
      orders_[p].resize(cells);
      for (size_t i = 0; i < cells; ++i) orders_[p][i] = root_order[i % H_];
    }
    for (int n : tree_->decision_nodes) {
      if (tree_->player[n] != p) continue;
      for (int c = tree_->first_child[n]; c < tree_->first_child[n] + tree_->num_children[n]; ++c) {
        for (int h = 0; h < H_; ++h) {
          const size_t i = static_cast<size_t>(n) * H_ + h;
          const double own = orders && orders_[p][i] != 0 ? 0.0 : reach_[p][i];
          sum_[static_cast<size_t>(c) * H_ + h] = own * current_[static_cast<size_t>(c) * H_ + h];
        }
      }
    }
  }
  if (orders) {
    regret_order_.assign(cells, kNeverUpdated);
    scratch_keep_.assign(H_, 0.0);
    scratch_replace_.assign(H_, 0.0);
    node_order_.assign(tree_->size(), 0);
    opp_leading_.assign(cells, 0.0);
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
    if (H_ == 1) single_hand_values_.assign(static_cast<size_t>(L) * 2, std::numeric_limits<double>::quiet_NaN());
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
// and scaled by the opponent's mass. Off-path modes: the opponent's reach is its
// lowest-order term at each node (opp_leading_, filled by cfr_step_orders), beliefs are
// normalised by normalize_reach, and the values of node n are the coefficients of its
// order node_order_[n].
void SubgameSolver::compute_leaf_values(int player) {
  const int opp = 1 - player;
  const bool orders = tracks_orders();
  const std::vector<double>& opp_reach = orders ? opp_leading_ : reach_[opp];
  fill_terminal_values(*game_, *tree_, player, opp_reach, &values_);
  const int L = static_cast<int>(tree_->pseudo_leaves.size());
  if (L == 0) return;
  const int row = batch_.row_size;
  const int F = game_->feature_size();

  // A leaf the opponent reaches with zero mass has value exactly 0 for `player` (the net's
  // values are scaled by that mass), so it is not queried: regret matching plays many
  // actions with probability exactly 0, and the net is nearly all of a subgame's cost.
  // kFloor does not query leaves of order 2 or more either: regret matching never sees them.
  queried_leaves_.clear();
  int cached = 0;
  batch_.queried_player.clear();
  batch_.histories.clear();
  batch_.beliefs0.clear();
  batch_.beliefs1.clear();
  for (int i = 0; i < L; ++i) {
    const size_t n = static_cast<size_t>(tree_->pseudo_leaves[i]);
    double mass = 0.0;
    for (int h = 0; h < H_; ++h) mass += opp_reach[n * H_ + h];
    const bool beyond_floor = orders && params_.off_path == OffPath::kFloor && node_order_[n] >= 2;
    if (beyond_floor || !(mass > 0.0)) {
      for (int h = 0; h < H_; ++h) values_[n * H_ + h] = 0.0;
      continue;
    }
    // One hand per player (perfect information): the beliefs are always the point mass,
    // so a leaf's query row never changes and the net is asked once per leaf and player.
    if (!single_hand_values_.empty() && !std::isnan(single_hand_values_[static_cast<size_t>(i) * 2 + player])) {
      values_[n] = mass * single_hand_values_[static_cast<size_t>(i) * 2 + player];
      ++cached;
      continue;
    }
    const size_t j = queried_leaves_.size();
    queried_leaves_.push_back({static_cast<int>(n), i, mass});
    float* r = &query_rows_[j * row];
    std::copy_n(&leaf_rows_[static_cast<size_t>(i) * row], row, r);
    r[1] = static_cast<float>(player);
    double* b = &query_beliefs_[j * 2 * H_];
    for (int p = 0; p < 2; ++p) {
      if (orders) normalize_reach(&reach_[p][n * H_], &orders_[p][n * H_], H_, params_.off_path, b + p * H_);
      else normalize_beliefs(&reach_[p][n * H_], H_, b + p * H_);
      for (int h = 0; h < H_; ++h) r[2 + F + p * H_ + h] = static_cast<float>(b[p * H_ + h]);
    }
    batch_.queried_player.push_back(player);
    batch_.histories.push_back(&tree_->history[n]);
    batch_.beliefs0.push_back(b);
    batch_.beliefs1.push_back(b + H_);
  }
  batch_.size = static_cast<int>(queried_leaves_.size());
  leaf_queries_ += batch_.size;
  leaf_queries_skipped_ += L - batch_.size - cached;
  if (batch_.size == 0) return;
  net_->compute_values(batch_, leaf_out_.data());
  for (int j = 0; j < batch_.size; ++j) {
    const auto [n, leaf, mass] = queried_leaves_[j];
    for (int h = 0; h < H_; ++h)
      values_[static_cast<size_t>(n) * H_ + h] = mass * leaf_out_[static_cast<size_t>(j) * H_ + h];
    if (!single_hand_values_.empty()) single_hand_values_[static_cast<size_t>(leaf) * 2 + player] = leaf_out_[j];
  }
}

void SubgameSolver::iterate_beliefs(int node, int player, double* out) const {
  if (!tracks_orders()) throw std::logic_error("iterate_beliefs needs an off-path mode other than skip (CFR solvers)");
  const size_t i = static_cast<size_t>(node) * H_;
  normalize_reach(&reach_[player][i], &orders_[player][i], H_, params_.off_path, out);
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

// Discounts applied after update number t of a player (t = number of policies already in
// the average).
Discounts discounts_after(const SolverParams& params, int t_update) {
  Discounts d;
  const double tt = t_update;
  switch (params.kind) {
    case SolverKind::kLinearCfr: d.pos = d.neg = d.strat = tt / (tt + 1.0); break;
    case SolverKind::kCfrPlus: d.strat = tt / (tt + 1.0); break;
    case SolverKind::kDcfr: {
      const double a = std::pow(tt, params.dcfr_alpha), b = std::pow(tt, params.dcfr_beta);
      d.pos = a / (a + 1.0);
      d.neg = b / (b + 1.0);
      d.strat = std::pow(tt / (tt + 1.0), params.dcfr_gamma);
      break;
    }
    default: break;
  }
  d.floor_regrets = params.kind == SolverKind::kCfrPlus;
  return d;
}

}  // namespace

void SubgameSolver::cfr_step(int player) {
  if (tracks_orders()) {
    cfr_step_orders(player);
    return;
  }
  const PublicTree& t = *tree_;
  const int H = H_;
  // Invariant: reach_[p] holds p's reach under current_ (set by the constructor and by
  // the fused pass at the end of each of p's updates), so no reach pass is needed here.
  compute_leaf_values(player);
  with_hands<RunBackup>(H, t, H, player, current_.data(), values_.data(), regrets_.data());
  const int t_update = ++steps_[player];
  update_root_mean(player, t_update);

  const Discounts d = discounts_after(params_, t_update);
  with_hands<RunUpdate>(H, t, H, player, d, reach_[player].data(), regrets_.data(), current_.data(), sum_.data(),
                        scratch_.data());
  average_stale_ = true;
}

// One CFR update of `player` with reaches kept as leading-order terms (see OffPath). The
// arithmetic on order-0 terms is that of cfr_step; what differs is what happens off path:
//  * the opponent's reach at node n is its lowest-order term, of order K(n) = node_order_[n]
//    (0 wherever the opponent's iterate reaches n); values at n are coefficients of eps^K(n),
//    so an opponent node sums only the children of its own order;
//  * the regrets of a node and hand hold the coefficients of one order, regret_order_: an
//    update of lower order replaces them, one of the same order adds to them, one of
//    higher order is negligible, and one whose regrets are all 0 changes nothing (kFloor
//    also drops order 2 and beyond, which its floor never sees);
//  * regret matching: kConditional uses the positive regrets whatever their order, and an
//    action it gives probability 0 is taken at the next order with weight 1; kFloor plays
//    as the original's max(R, eps): order 0 as kConditional but with weight 1 / total,
//    order 1 in proportion to max(R, 1), higher orders (or none yet) uniformly.
void SubgameSolver::cfr_step_orders(int player) {
  const PublicTree& t = *tree_;
  const int H = H_;
  const int opp = 1 - player;
  const bool floor_mode = params_.off_path == OffPath::kFloor;
  {
    const std::vector<double>& coef = reach_[opp];
    const std::vector<uint16_t>& order = orders_[opp];
    for (int n = 0; n < t.size(); ++n) {
      const size_t b = static_cast<size_t>(n) * H;
      uint16_t lowest = order[b];
      for (int h = 1; h < H; ++h) lowest = std::min(lowest, order[b + h]);
      node_order_[n] = lowest;
      for (int h = 0; h < H; ++h) opp_leading_[b + h] = order[b + h] == lowest ? coef[b + h] : 0.0;
    }
  }
  compute_leaf_values(player);

  // Bottom-up values of the current iterate and regrets, order by order.
  for (auto it = t.decision_nodes.rbegin(); it != t.decision_nodes.rend(); ++it) {
    const int n = *it;
    const int begin = t.first_child[n], end = begin + t.num_children[n];
    const uint16_t K = node_order_[n];
    double* v = &values_[static_cast<size_t>(n) * H];
    for (int h = 0; h < H; ++h) v[h] = 0.0;
    if (t.player[n] != player) {
      for (int c = begin; c < end; ++c) {
        if (node_order_[c] != K) continue;  // reached at a higher order: negligible here
        const double* vc = &values_[static_cast<size_t>(c) * H];
        for (int h = 0; h < H; ++h) v[h] += vc[h];
      }
      continue;
    }
    for (int c = begin; c < end; ++c) {
      const double* vc = &values_[static_cast<size_t>(c) * H];
      const double* p = &current_[static_cast<size_t>(c) * H];
      for (int h = 0; h < H; ++h) v[h] += p[h] * vc[h];
    }
    if (floor_mode && K >= 2) continue;
    // Per hand: keep (regrets of a lower order lead), add (same order) or replace (this
    // order is lower). Regrets that are all 0 at order K carry nothing: the stored ones
    // still lead.
    uint16_t* stored = &regret_order_[static_cast<size_t>(n) * H];
    double* keep = scratch_keep_.data();
    double* replace = scratch_replace_.data();
    for (int h = 0; h < H; ++h) keep[h] = 1.0;
    for (int c = begin; c < end; ++c) {
      const double* vc = &values_[static_cast<size_t>(c) * H];
      for (int h = 0; h < H; ++h) keep[h] = vc[h] != v[h] ? 0.0 : keep[h];
    }
    for (int h = 0; h < H; ++h) {
      if (K > stored[h]) keep[h] = 1.0;
      replace[h] = keep[h] == 0.0 && K < stored[h] ? 1.0 : 0.0;
      if (keep[h] == 0.0) stored[h] = K;
    }
    for (int c = begin; c < end; ++c) {
      const double* vc = &values_[static_cast<size_t>(c) * H];
      double* r = &regrets_[static_cast<size_t>(c) * H];
      for (int h = 0; h < H; ++h) {
        const double x = vc[h] - v[h];
        r[h] = keep[h] != 0.0 ? r[h] : replace[h] != 0.0 ? x : r[h] + x;
      }
    }
  }
  const int t_update = ++steps_[player];
  update_root_mean(player, t_update);

  // Top-down: regret matching, discounting, the player's reach (coefficients and orders)
  // under the new iterate and the average (order-0 reach only).
  const Discounts d = discounts_after(params_, t_update);
  std::vector<double>& coef = reach_[player];
  std::vector<uint16_t>& order = orders_[player];
  double* total = scratch_.data();
  double* tremble = scratch_keep_.data();
  double* rule = scratch_replace_.data();  // kFloor: 0 = regret matching, 1 = max(R, 1), 2 = uniform
  for (int n : t.decision_nodes) {
    const int begin = t.first_child[n], end = begin + t.num_children[n];
    const size_t bn = static_cast<size_t>(n) * H;
    if (t.player[n] != player) {
      for (int c = begin; c < end; ++c) {
        std::copy(&coef[bn], &coef[bn] + H, &coef[static_cast<size_t>(c) * H]);
        std::copy(&order[bn], &order[bn] + H, &order[static_cast<size_t>(c) * H]);
      }
      continue;
    }
    const double uniform = 1.0 / (end - begin);
    uint16_t* stored = &regret_order_[bn];
    if (d.floor_regrets) {
      // CFR+: regrets floored at 0 exactly; a hand whose regrets are then all 0 has no
      // leading order any more (the next update of any order leads).
      std::fill(total, total + H, 0.0);
      for (int c = begin; c < end; ++c) {
        double* r = &regrets_[static_cast<size_t>(c) * H];
        for (int h = 0; h < H; ++h) {
          r[h] = r[h] > 0.0 ? r[h] : 0.0;
          total[h] += r[h];
        }
      }
      for (int h = 0; h < H; ++h) {
        if (total[h] == 0.0) stored[h] = kNeverUpdated;
      }
    }
    // kConditional: regret matching at every order.
    for (int h = 0; h < H; ++h) rule[h] = !floor_mode || stored[h] == 0 ? 0.0 : stored[h] == 1 ? 1.0 : 2.0;
    // A loop, not std::fill(total, total + H): GCC 13 cannot see H >= 0 there and warns
    // (-Wstringop-overflow) about a memset of a negative length.
    for (int h = 0; h < H; ++h) total[h] = 0.0;
    for (int c = begin; c < end; ++c) {
      const double* r = &regrets_[static_cast<size_t>(c) * H];
      for (int h = 0; h < H; ++h) {
        const double floored = rule[h] == 0.0 ? (r[h] > 0.0 ? r[h] : 0.0) : (r[h] > 1.0 ? r[h] : 1.0);
        total[h] += rule[h] == 2.0 ? 0.0 : floored;
      }
    }
    for (int h = 0; h < H; ++h) tremble[h] = floor_mode && total[h] > 0.0 ? 1.0 / total[h] : 1.0;
    for (int c = begin; c < end; ++c) {
      const size_t i = static_cast<size_t>(c) * H;
      for (int h = 0; h < H; ++h) {
        const double r = regrets_[i + h];
        double p = uniform;
        if (rule[h] == 0.0 && total[h] > 0.0) p = (r > 0.0 ? r : 0.0) / total[h];
        else if (rule[h] == 1.0) p = (r > 1.0 ? r : 1.0) / total[h];
        current_[i + h] = p;
        regrets_[i + h] = r * (r > 0.0 ? d.pos : d.neg);
        const double parent = coef[bn + h];
        const uint16_t k = order[bn + h];
        if (p > 0.0) {
          coef[i + h] = parent * p;
          order[i + h] = k;
        } else {
          coef[i + h] = parent * tremble[h];
          order[i + h] = k < kMaxOrder ? static_cast<uint16_t>(k + 1) : kMaxOrder;
        }
        sum_[i + h] = sum_[i + h] * d.strat + (k == 0 ? parent * p : 0.0);
      }
    }
  }
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
