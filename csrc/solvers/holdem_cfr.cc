#include "solvers/holdem_cfr.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "games/holdem_cards.h"
#include "util/denormals.h"
#include "util/simd.h"
#include "util/spin_pool.h"

namespace rebel {
namespace holdem {

namespace {

// A stack of scratch vectors for one thread's recursion: allocations are released in the
// reverse order by resetting to a mark. Its size is bounded from the betting tree up front, so
// nothing is allocated while solving.
template <class T>
class Arena {
 public:
  void reserve(size_t n) { buffer_.assign(n, T(0)); }
  size_t mark() const { return top_; }
  void reset(size_t mark) { top_ = mark; }
  T* alloc(size_t n) {
    const size_t rounded = (n + 15) & ~size_t{15};
    if (top_ + rounded > buffer_.size()) throw std::logic_error("holdem solver: scratch stack exhausted");
    T* p = buffer_.data() + top_;
    top_ += rounded;
    return p;
  }

 private:
  std::vector<T> buffer_;
  size_t top_ = 0;
};

// A pool of the solver's threads for a scope: `slot` (the solver's pool_) points to it until
// the scope ends.
class PoolScope {
 public:
  PoolScope(SpinPool*& slot, int threads) : pool_(threads), slot_(slot) { slot_ = &pool_; }
  ~PoolScope() { slot_ = nullptr; }
  PoolScope(const PoolScope&) = delete;
  PoolScope& operator=(const PoolScope&) = delete;

 private:
  SpinPool pool_;
  SpinPool*& slot_;
};

// The largest scratch a path from `action` down may hold at once, in values of
// (hands + 16), the padding of one allocation.
size_t scratch_bound(const BettingTree& t, int action) {
  size_t below = 0;
  for (int i = 0; i < t.num_children(action); ++i) below = std::max(below, scratch_bound(t, t.child(action, i)));
  switch (t.kind[action]) {
    case BettingTree::kDecision:  // sigma, values, the decoded regrets and strategy (compressed), the
                                  // children's reaches (forking over the actions)
      return below + 5 * static_cast<size_t>(t.num_children(action)) + 4;
    case BettingTree::kChance:
      return below + 52 + 3;
    default:
      return 0;
  }
}

// The hot loops over one node's hands, one clone per instruction set (util/simd.h); every
// branch is a select, so each loop vectorises.

// sigma = max(regret, 0) / sum over actions, uniform where the sum is 0. sums: 2 x hands scratch.
REBEL_SIMD_CLONES void regret_match(const float* regrets, int actions, int hands, float* sigma, float* sums) {
  float* total = sums;
  float* uniform = sums + hands;
  std::fill(total, total + hands, 0.0f);
  for (int a = 0; a < actions; ++a) {
    const float* r = regrets + static_cast<size_t>(a) * hands;
    for (int h = 0; h < hands; ++h) total[h] += r[h] > 0.0f ? r[h] : 0.0f;
  }
  // Divide, not multiply by the reciprocal: regrets discounted toward zero reach float32's
  // subnormals, whose reciprocal overflows to infinity (and 0 x inf is NaN).
  const float u = 1.0f / static_cast<float>(actions);
  for (int h = 0; h < hands; ++h) {
    const bool any = total[h] > 0.0f;
    uniform[h] = any ? 0.0f : u;
    total[h] = any ? total[h] : 1.0f;
  }
  for (int a = 0; a < actions; ++a) {
    const float* r = regrets + static_cast<size_t>(a) * hands;
    float* s = sigma + static_cast<size_t>(a) * hands;
    for (int h = 0; h < hands; ++h) s[h] = (r[h] > 0.0f ? r[h] : 0.0f) / total[h] + uniform[h];
  }
}

// out = a * b, elementwise.
REBEL_SIMD_CLONES void multiply(const float* a, const float* b, int n, float* out) {
  for (int i = 0; i < n; ++i) out[i] = a[i] * b[i];
}

// out += a * b, elementwise.
REBEL_SIMD_CLONES void multiply_add(const float* a, const float* b, int n, float* out) {
  for (int i = 0; i < n; ++i) out[i] += a[i] * b[i];
}

REBEL_SIMD_CLONES void add(const float* a, int n, float* out) {
  for (int i = 0; i < n; ++i) out[i] += a[i];
}

REBEL_SIMD_CLONES void scale_copy(const float* a, float scale, int n, float* out) {
  for (int i = 0; i < n; ++i) out[i] = a[i] * scale;
}

// One action's row: regrets discounted by sign then plus (value - node value); the cumulative
// strategy discounted then plus the actor's reach times its strategy.
REBEL_SIMD_CLONES void update_row(float* regret, float* cumulative, const float* sigma, const float* value,
                                  const float* node_value, const float* own_reach, int hands, float pos, float neg,
                                  float strat, bool floor_at_zero) {
  if (floor_at_zero) {
    for (int h = 0; h < hands; ++h) {
      const float x = regret[h] * (regret[h] > 0.0f ? pos : neg) + (value[h] - node_value[h]);
      regret[h] = x > 0.0f ? x : 0.0f;
    }
  } else {
    for (int h = 0; h < hands; ++h) regret[h] = regret[h] * (regret[h] > 0.0f ? pos : neg) + (value[h] - node_value[h]);
  }
  for (int h = 0; h < hands; ++h) cumulative[h] = cumulative[h] * strat + own_reach[h] * sigma[h];
}

// The average strategy from the cumulative one (float32, or 16-bit codes: one scale per node,
// which normalising cancels).
template <class C, class T>
void normalise_average(const C* cumulative, int actions, int hands, T* sigma) {
  for (int h = 0; h < hands; ++h) {
    double total = 0;
    for (int a = 0; a < actions; ++a) total += cumulative[static_cast<size_t>(a) * hands + h];
    for (int a = 0; a < actions; ++a) {
      const size_t i = static_cast<size_t>(a) * hands + h;
      sigma[i] = total > 0 ? static_cast<T>(cumulative[i] / total) : static_cast<T>(1.0 / actions);
    }
  }
}

// 16-bit storage (postflop-solver's compression): a node's regrets as int16 codes of
// max|regret| / 32767, its cumulative strategy as uint16 codes of max / 65535, rounded to the
// nearest code; the scale is kept per node in float32.
REBEL_SIMD_CLONES void decode(const int16_t* codes, float scale, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(codes[i]) * scale;
}

REBEL_SIMD_CLONES void decode(const uint16_t* codes, float scale, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(codes[i]) * scale;
}

// Rounding half away from zero by a select and a truncation, so the loops vectorise.
REBEL_SIMD_CLONES float encode(const float* values, size_t n, int16_t* codes) {
  float top = 0;
  for (size_t i = 0; i < n; ++i) {
    const float a = std::fabs(values[i]);
    top = a > top ? a : top;
  }
  if (!(top > 0)) {
    std::fill(codes, codes + n, int16_t{0});
    return 0;
  }
  const float to_code = 32767.0f / top;
  for (size_t i = 0; i < n; ++i) {
    const float v = values[i] * to_code;
    codes[i] = static_cast<int16_t>(static_cast<int32_t>(v + (v >= 0 ? 0.5f : -0.5f)));
  }
  return top / 32767.0f;
}

REBEL_SIMD_CLONES float encode(const float* values, size_t n, uint16_t* codes) {
  float top = 0;
  for (size_t i = 0; i < n; ++i) top = values[i] > top ? values[i] : top;
  if (!(top > 0)) {
    std::fill(codes, codes + n, uint16_t{0});
    return 0;
  }
  const float to_code = 65535.0f / top;
  for (size_t i = 0; i < n; ++i) {
    const float v = values[i] > 0 ? values[i] * to_code : 0.0f;  // cumulative strategies are >= 0
    codes[i] = static_cast<uint16_t>(static_cast<int32_t>(v + 0.5f));
  }
  return top / 65535.0f;
}

// The card a chance node's child deals: the later of its dealt cards.
int dealt_card(const EndgameNode& child) { return child.dealt[1] >= 0 ? child.dealt[1] : child.dealt[0]; }

// Suit isomorphism: adds to `out` the values of the deals a chance node's child stands for,
// its own values `v` read at each hand's suit-swapped hand.
template <class T>
void add_isomorphic_deals(const HoldemEndgame& g, int child, int player, const T* v, T* out) {
  const uint8_t suits = g.isomorphic_suits(child);
  if (!suits) return;
  const int own_suit = card_suit(dealt_card(g.node(child)));
  const int hands = g.num_hands(player);
  for (int s = 0; s < 4; ++s) {
    if (!(suits & (1u << s))) continue;
    const int32_t* swapped = g.swapped_hands(player, own_suit, s).data();
    for (int h = 0; h < hands; ++h) out[h] += v[swapped[h]];
  }
}

}  // namespace

HoldemAlgorithm parse_holdem_algorithm(const std::string& name) {
  if (name == "cfr") return HoldemAlgorithm::kCfr;
  if (name == "cfr+") return HoldemAlgorithm::kCfrPlus;
  if (name == "lcfr") return HoldemAlgorithm::kLcfr;
  if (name == "dcfr") return HoldemAlgorithm::kDcfr;
  if (name == "dcfr-pfs") return HoldemAlgorithm::kDcfrPfs;
  throw std::invalid_argument("unknown hold'em solver '" + name + "' (cfr, cfr+, lcfr, dcfr, dcfr-pfs)");
}

std::string holdem_algorithm_name(HoldemAlgorithm a) {
  switch (a) {
    case HoldemAlgorithm::kCfr: return "cfr";
    case HoldemAlgorithm::kCfrPlus: return "cfr+";
    case HoldemAlgorithm::kLcfr: return "lcfr";
    case HoldemAlgorithm::kDcfr: return "dcfr";
    case HoldemAlgorithm::kDcfrPfs: return "dcfr-pfs";
  }
  return "?";
}

struct HoldemSolver::Workspace {
  Arena<float> f;
  Arena<double> d;
  std::vector<double> scratch;
};

HoldemSolver::HoldemSolver(std::shared_ptr<const HoldemEndgame> game, HoldemAlgorithm algorithm, int threads,
                           bool compressed)
    : game_(std::move(game)), algorithm_(algorithm), threads_(threads), compressed_(compressed) {
  if (!game_) throw std::invalid_argument("the hold'em solver needs a game");
  if (threads < 1 || threads > 256) throw std::invalid_argument("threads must be in 1..256, got " + std::to_string(threads));
  const size_t values = static_cast<size_t>(game_->size().storage_values);
  if (compressed_) {
    regret_codes_.assign(values, 0);
    strategy_codes_.assign(values, 0);
    regret_scale_.assign(game_->nodes().size(), 0.0f);
    strategy_scale_.assign(game_->nodes().size(), 0.0f);
  } else {
    regrets_.assign(values, 0.0f);
    strategy_.assign(values, 0.0f);
  }
  lock_of_.assign(game_->nodes().size(), -1);
  // A spot with no deal (the river) has no chance outcomes to spread the threads over: its root
  // runs its actions' subtrees on the threads instead.
  fork_actions_ = game_->size().chance_nodes == 0;
  const size_t hands = static_cast<size_t>(std::max(game_->num_hands(0), game_->num_hands(1))) + 16;
  const size_t bound = (scratch_bound(game_->betting(), 0) + 4) * hands;
  for (int t = 0; t < threads_; ++t) {
    auto ws = std::make_unique<Workspace>();
    ws->f.reserve(bound);
    ws->d.reserve(bound);
    ws->scratch.assign(game_->scratch_size(), 0.0);
    workspaces_.push_back(std::move(ws));
  }
}

HoldemSolver::~HoldemSolver() = default;

void HoldemSolver::set_discounts(int t) {
  const double s = t - 1;
  floor_regrets_ = false;
  switch (algorithm_) {
    case HoldemAlgorithm::kCfr:
      pos_ = neg_ = strat_ = 1;
      break;
    case HoldemAlgorithm::kCfrPlus:
      pos_ = neg_ = 1;
      floor_regrets_ = true;
      strat_ = static_cast<float>(s / t);
      break;
    case HoldemAlgorithm::kLcfr:
      pos_ = neg_ = strat_ = static_cast<float>(s / t);
      break;
    case HoldemAlgorithm::kDcfr: {
      const double p = s * std::sqrt(s);
      pos_ = static_cast<float>(p / (p + 1));
      neg_ = 0.5f;
      strat_ = static_cast<float>((s / t) * (s / t));
      break;
    }
    case HoldemAlgorithm::kDcfrPfs: {
      const double ta = std::max(s - 1, 0.0);
      const double p = ta * std::sqrt(ta);
      const uint64_t si = static_cast<uint64_t>(s);
      uint64_t power = 0;
      if (si > 0) {
        int top = 63 - __builtin_clzll(si);
        power = uint64_t{1} << (top & ~1);
      }
      const double u = static_cast<double>(si - power);
      pos_ = static_cast<float>(p / (p + 1));
      neg_ = 0.5f;
      strat_ = static_cast<float>(std::pow(u / (u + 1), 3));
      break;
    }
  }
}

void HoldemSolver::iterate(int n, const std::atomic<bool>* cancel) {
  if (n < 0) throw std::invalid_argument("the number of iterations must be >= 0, got " + std::to_string(n));
  if (next_half_ != 0) throw std::logic_error("iterate: an iteration begun by iterate_player(0) is not finished");
  if (n > 0) {
    check_leaf_values(0);
    check_leaf_values(1);
  }
  // DCFR halves negative regrets every iteration: in float32 they reach subnormals after ~130
  // iterations, which cost x86 cores a microcode assist per operation. As zeros they change
  // nothing (regret matching ignores regrets <= 0).
  FlushDenormalsScope flush;
  PoolScope scope(pool_, threads_);  // one pool for all n iterations, not one per half-iteration
  for (int i = 0; i < n; ++i) {
    if (cancel && cancel->load()) return;
    half_iteration(0);
    half_iteration(1);
  }
}

void HoldemSolver::iterate_player(int player) {
  if (player != next_half_) {
    throw std::logic_error("iterate_player(" + std::to_string(player) + "): player " + std::to_string(next_half_) +
                           "'s half comes next (0 starts an iteration, 1 ends it)");
  }
  check_leaf_values(player);
  FlushDenormalsScope flush;  // as in iterate()
  PoolScope scope(pool_, threads_);
  half_iteration(player);
  next_half_ = 1 - player;
}

void HoldemSolver::check_leaf_values(int player) const {
  if (!game_->leaves().empty() && !leaf_values_set_[player]) {
    throw std::logic_error("the game has " + std::to_string(game_->leaves().size()) + " depth-limit leaves: set player " +
                           std::to_string(player) + "'s leaf values (set_leaf_values) before iterating");
  }
}

void HoldemSolver::set_leaf_values(int player, const std::vector<float>& values) {
  if (player != 0 && player != 1) throw std::invalid_argument("player must be 0 or 1, got " + std::to_string(player));
  const size_t want = game_->leaves().size() * static_cast<size_t>(game_->num_hands(player));
  if (game_->leaves().empty()) throw std::invalid_argument("the game has no depth-limit leaves");
  if (values.size() != want) {
    throw std::invalid_argument("leaf values of player " + std::to_string(player) + ": " + std::to_string(values.size()) +
                                " values for " + std::to_string(game_->leaves().size()) + " leaves x " +
                                std::to_string(game_->num_hands(player)) + " hands");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      throw std::invalid_argument("leaf values of player " + std::to_string(player) + ": value " + std::to_string(i) +
                                  " is not finite");
    }
  }
  leaf_values_[player] = values;
  leaf_values_set_[player] = true;
}

// One half-iteration, on the pool and denormal mode the caller set up: player 0's starts
// iteration t (its discounts), player 1's ends it.
void HoldemSolver::half_iteration(int player) {
  const HoldemEndgame& g = *game_;
  if (player == 0) set_discounts(iterations_ + 1);
  Workspace& ws = *workspaces_[0];
  const size_t mark = ws.f.mark();
  const int opp = 1 - player;
  float* opp_reach = ws.f.alloc(g.num_hands(opp));
  float* own_reach = ws.f.alloc(g.num_hands(player));
  float* out = ws.f.alloc(g.num_hands(player));
  for (int h = 0; h < g.num_hands(opp); ++h) opp_reach[h] = static_cast<float>(g.weights(opp)[h]);
  for (int h = 0; h < g.num_hands(player); ++h) own_reach[h] = static_cast<float>(g.weights(player)[h]);
  cfr(0, player, opp_reach, own_reach, out, 0, true);
  ws.f.reset(mark);
  if (player == 1) ++iterations_;
}

std::array<std::vector<double>, 2> HoldemSolver::leaf_reaches(bool average) {
  const HoldemEndgame& g = *game_;
  std::array<std::vector<double>, 2> reach, out;
  for (int p = 0; p < 2; ++p) {
    reach[p] = g.weights(p);
    out[p].assign(g.leaves().size() * static_cast<size_t>(g.num_hands(p)), 0.0);
  }
  reach_down(0, average, reach, out);
  return out;
}

void HoldemSolver::reach_down(int node_index, bool average, std::array<std::vector<double>, 2>& reach,
                              std::array<std::vector<double>, 2>& out) {
  const HoldemEndgame& g = *game_;
  const EndgameNode& node = g.node(node_index);
  if (node.kind == BettingTree::kLeaf) {
    const size_t leaf = static_cast<size_t>(g.leaf_index(node_index));
    for (int p = 0; p < 2; ++p) std::copy(reach[p].begin(), reach[p].end(), out[p].begin() + leaf * reach[p].size());
    return;
  }
  if (node.kind == BettingTree::kChance) {
    for (int i = 0; i < node.num_children; ++i) {
      const int child = node.first_child + i;
      const int card = dealt_card(g.node(child));
      std::array<std::vector<double>, 2> below = reach;
      for (int p = 0; p < 2; ++p) {
        for (int32_t h : g.hands_with_card(p, card)) below[p][h] = 0;
      }
      reach_down(child, average, below, out);
    }
    return;
  }
  if (node.kind != BettingTree::kDecision) return;
  const int p = node.player, hands = g.num_hands(p);
  std::vector<float> sigma(static_cast<size_t>(node.num_children) * hands);
  if (average) {
    average_into(node_index, sigma.data());
  } else {
    Workspace& ws = *workspaces_[0];
    const size_t mark = ws.f.mark();
    current_into(node_index, sigma.data(), ws);
    ws.f.reset(mark);
  }
  for (int a = 0; a < node.num_children; ++a) {
    std::array<std::vector<double>, 2> below = reach;
    for (int h = 0; h < hands; ++h) below[p][h] *= sigma[static_cast<size_t>(a) * hands + h];
    reach_down(node.first_child + a, average, below, out);
  }
}

template <class F>
void HoldemSolver::for_each_action(int actions, int thread, bool may_fork, F&& body) {
  if (may_fork && fork_actions_ && pool_ && pool_->threads() > 1) {
    pool_->run(static_cast<size_t>(actions), [&](size_t a, int t) {
      FlushDenormalsScope flush;  // on a pool worker as on the caller
      body(a, t, false);
    });
    return;
  }
  for (int a = 0; a < actions; ++a) body(static_cast<size_t>(a), thread, may_fork);
}

void HoldemSolver::cfr(int node_index, int player, const float* opp_reach, const float* own_reach, float* out, int thread,
                       bool may_fork) {
  const HoldemEndgame& g = *game_;
  const EndgameNode& node = g.node(node_index);
  Workspace& ws = *workspaces_[thread];
  const int hands = g.num_hands(player);
  const int opp = 1 - player;
  const int opp_hands = g.num_hands(opp);
  switch (node.kind) {
    case BettingTree::kFold:
    case BettingTree::kShowdown:
      g.terminal_values(node_index, player, opp_reach, out, ws.scratch.data());
      return;
    case BettingTree::kLeaf: {
      float mass = 0;
      for (int h = 0; h < opp_hands; ++h) mass += opp_reach[h];
      const float* v = leaf_values_[player].data() + static_cast<size_t>(g.leaf_index(node_index)) * hands;
      for (int h = 0; h < hands; ++h) out[h] = v[h] * mass;
      return;
    }
    case BettingTree::kChance: {
      const float scale = 1.0f / static_cast<float>(g.chance_divisor(node_index));
      const int k = node.num_children;
      // One child: its reach with the dealt card's hands removed, its values into `dst`.
      auto child = [&](int i, int t, float* dst, bool fork) {
        FlushDenormalsScope flush;  // on a pool worker as on the caller
        Workspace& w = *workspaces_[t];
        const size_t mark = w.f.mark();
        const EndgameNode& c = g.node(node.first_child + i);
        const int card = dealt_card(c);
        float* child_opp = w.f.alloc(opp_hands);
        float* child_own = w.f.alloc(hands);
        scale_copy(opp_reach, scale, opp_hands, child_opp);
        for (int32_t h : g.hands_with_card(opp, card)) child_opp[h] = 0;
        std::copy(own_reach, own_reach + hands, child_own);
        for (int32_t h : g.hands_with_card(player, card)) child_own[h] = 0;
        cfr(node.first_child + i, player, child_opp, child_own, dst, t, fork);
        w.f.reset(mark);
      };
      const size_t mark = ws.f.mark();
      if (may_fork && pool_ && pool_->threads() > 1) {
        float* values = ws.f.alloc(static_cast<size_t>(k) * (hands + 16));
        const size_t stride = static_cast<size_t>(hands + 16);
        pool_->run(static_cast<size_t>(k), [&](size_t i, int t) { child(static_cast<int>(i), t, values + i * stride, false); });
        std::fill(out, out + hands, 0.0f);
        for (int i = 0; i < k; ++i) {
          add(values + i * stride, hands, out);
          add_isomorphic_deals(g, node.first_child + i, player, values + i * stride, out);
        }
      } else {
        float* v = ws.f.alloc(hands);
        std::fill(out, out + hands, 0.0f);
        for (int i = 0; i < k; ++i) {
          child(i, thread, v, may_fork);
          add(v, hands, out);
          add_isomorphic_deals(g, node.first_child + i, player, v, out);
        }
      }
      ws.f.reset(mark);
      return;
    }
    default:
      break;
  }
  const int actions = node.num_children;
  const size_t mark = ws.f.mark();
  if (node.player == player) {
    const size_t n = static_cast<size_t>(actions) * hands;
    const int32_t lock = lock_of_[node_index];
    float* regrets = nullptr;  // a locked node neither reads nor updates its regrets and strategy
    float* cumulative = nullptr;
    if (lock < 0 && compressed_) {
      regrets = ws.f.alloc(n);
      cumulative = ws.f.alloc(n);
      decode(regret_codes_.data() + node.storage, regret_scale_[node_index], n, regrets);
      decode(strategy_codes_.data() + node.storage, strategy_scale_[node_index], n, cumulative);
    } else if (lock < 0) {
      regrets = regrets_.data() + node.storage;
      cumulative = strategy_.data() + node.storage;
    }
    float* sigma = ws.f.alloc(n);
    float* values = ws.f.alloc(n);
    float* child_owns = ws.f.alloc(n);
    if (lock >= 0) {
      std::copy(locks_[lock].begin(), locks_[lock].end(), sigma);
    } else {
      regret_match(regrets, actions, hands, sigma, ws.f.alloc(2 * static_cast<size_t>(hands)));
    }
    for (int a = 0; a < actions; ++a) {
      multiply(own_reach, sigma + static_cast<size_t>(a) * hands, hands, child_owns + static_cast<size_t>(a) * hands);
    }
    for_each_action(actions, thread, may_fork, [&](size_t a, int t, bool fork) {
      cfr(node.first_child + static_cast<int>(a), player, opp_reach, child_owns + a * hands, values + a * hands, t, fork);
    });
    std::fill(out, out + hands, 0.0f);
    for (int a = 0; a < actions; ++a) {
      multiply_add(sigma + static_cast<size_t>(a) * hands, values + static_cast<size_t>(a) * hands, hands, out);
    }
    for (int a = 0; a < actions && lock < 0; ++a) {
      const size_t row = static_cast<size_t>(a) * hands;
      update_row(regrets + row, cumulative + row, sigma + row, values + row, out, own_reach, hands, pos_, neg_, strat_,
                 floor_regrets_);
    }
    if (compressed_ && lock < 0) {
      regret_scale_[node_index] = encode(regrets, n, regret_codes_.data() + node.storage);
      strategy_scale_[node_index] = encode(cumulative, n, strategy_codes_.data() + node.storage);
    }
  } else {
    float* sigma = ws.f.alloc(static_cast<size_t>(actions) * opp_hands);
    float* child_opps = ws.f.alloc(static_cast<size_t>(actions) * opp_hands);
    float* values = ws.f.alloc(static_cast<size_t>(actions) * hands);
    current_into(node_index, sigma, ws);
    for (int a = 0; a < actions; ++a) {
      const size_t row = static_cast<size_t>(a) * opp_hands;
      multiply(opp_reach, sigma + row, opp_hands, child_opps + row);
    }
    for_each_action(actions, thread, may_fork, [&](size_t a, int t, bool fork) {
      cfr(node.first_child + static_cast<int>(a), player, child_opps + a * opp_hands, own_reach, values + a * hands, t, fork);
    });
    std::fill(out, out + hands, 0.0f);
    for (int a = 0; a < actions; ++a) add(values + static_cast<size_t>(a) * hands, hands, out);
  }
  ws.f.reset(mark);
}

void HoldemSolver::evaluate(int node_index, int player, Mode mode, const double* opp_reach, double* out, int thread,
                            bool may_fork) {
  const HoldemEndgame& g = *game_;
  const EndgameNode& node = g.node(node_index);
  Workspace& ws = *workspaces_[thread];
  const int hands = g.num_hands(player);
  const int opp = 1 - player;
  const int opp_hands = g.num_hands(opp);
  switch (node.kind) {
    case BettingTree::kFold:
    case BettingTree::kShowdown:
      g.terminal_values(node_index, player, opp_reach, out, ws.scratch.data());
      return;
    case BettingTree::kLeaf: {
      double mass = 0;
      for (int h = 0; h < opp_hands; ++h) mass += opp_reach[h];
      const float* v = leaf_values_[player].data() + static_cast<size_t>(g.leaf_index(node_index)) * hands;
      for (int h = 0; h < hands; ++h) out[h] = static_cast<double>(v[h]) * mass;
      return;
    }
    case BettingTree::kChance: {
      const double scale = 1.0 / g.chance_divisor(node_index);
      const int k = node.num_children;
      auto child = [&](int i, int t, double* dst, bool fork) {
        Workspace& w = *workspaces_[t];
        const size_t mark = w.d.mark();
        const int card = dealt_card(g.node(node.first_child + i));
        double* child_opp = w.d.alloc(opp_hands);
        for (int h = 0; h < opp_hands; ++h) child_opp[h] = opp_reach[h] * scale;
        for (int32_t h : g.hands_with_card(opp, card)) child_opp[h] = 0;
        evaluate(node.first_child + i, player, mode, child_opp, dst, t, fork);
        w.d.reset(mark);
      };
      const size_t mark = ws.d.mark();
      std::fill(out, out + hands, 0.0);
      if (may_fork && pool_ && pool_->threads() > 1) {
        const size_t stride = static_cast<size_t>(hands + 16);
        double* values = ws.d.alloc(static_cast<size_t>(k) * stride);
        pool_->run(static_cast<size_t>(k), [&](size_t i, int t) { child(static_cast<int>(i), t, values + i * stride, false); });
        for (int i = 0; i < k; ++i) {
          for (int h = 0; h < hands; ++h) out[h] += values[i * stride + h];
          add_isomorphic_deals(g, node.first_child + i, player, values + i * stride, out);
        }
      } else {
        double* v = ws.d.alloc(hands);
        for (int i = 0; i < k; ++i) {
          child(i, thread, v, may_fork);
          for (int h = 0; h < hands; ++h) out[h] += v[h];
          add_isomorphic_deals(g, node.first_child + i, player, v, out);
        }
      }
      ws.d.reset(mark);
      return;
    }
    default:
      break;
  }
  const int actions = node.num_children;
  const size_t mark = ws.d.mark();
  if (node.player == player) {
    double* values = ws.d.alloc(static_cast<size_t>(actions) * hands);
    for_each_action(actions, thread, may_fork, [&](size_t a, int t, bool fork) {
      evaluate(node.first_child + static_cast<int>(a), player, mode, opp_reach, values + a * hands, t, fork);
    });
    if ((mode == Mode::kBestResponse && lock_of_[node_index] < 0) || mode == Mode::kBestResponseThroughLocks) {
      std::copy(values, values + hands, out);
      for (int a = 1; a < actions; ++a) {
        const double* v = values + static_cast<size_t>(a) * hands;
        for (int h = 0; h < hands; ++h) out[h] = std::max(out[h], v[h]);
      }
    } else {
      double* sigma = ws.d.alloc(static_cast<size_t>(actions) * hands);
      average_into(node_index, sigma);
      std::fill(out, out + hands, 0.0);
      for (size_t i = 0; i < static_cast<size_t>(actions) * hands; ++i) out[i % hands] += sigma[i] * values[i];
    }
  } else {
    double* sigma = ws.d.alloc(static_cast<size_t>(actions) * opp_hands);
    double* child_opps = ws.d.alloc(static_cast<size_t>(actions) * opp_hands);
    double* values = ws.d.alloc(static_cast<size_t>(actions) * hands);
    average_into(node_index, sigma);
    for (size_t i = 0; i < static_cast<size_t>(actions) * opp_hands; ++i) child_opps[i] = opp_reach[i % opp_hands] * sigma[i];
    for_each_action(actions, thread, may_fork, [&](size_t a, int t, bool fork) {
      evaluate(node.first_child + static_cast<int>(a), player, mode, child_opps + a * opp_hands, values + a * hands, t, fork);
    });
    std::fill(out, out + hands, 0.0);
    for (size_t i = 0; i < static_cast<size_t>(actions) * hands; ++i) out[i % hands] += values[i];
  }
  ws.d.reset(mark);
}

std::array<std::vector<double>, 2> HoldemSolver::hand_values(Mode mode) {
  check_leaf_values(0);
  check_leaf_values(1);
  PoolScope scope(pool_, threads_);
  const HoldemEndgame& g = *game_;
  std::array<std::vector<double>, 2> result;
  for (int player = 0; player < 2; ++player) {
    Workspace& ws = *workspaces_[0];
    const size_t mark = ws.d.mark();
    const int opp = 1 - player;
    double* opp_reach = ws.d.alloc(g.num_hands(opp));
    std::copy(g.weights(opp).begin(), g.weights(opp).end(), opp_reach);
    result[player].assign(g.num_hands(player), 0.0);
    evaluate(0, player, mode, opp_reach, result[player].data(), 0, true);
    ws.d.reset(mark);
  }
  return result;
}

std::array<double, 2> HoldemSolver::values(Mode mode) {
  const auto per_hand = hand_values(mode);
  std::array<double, 2> result{};
  for (int player = 0; player < 2; ++player) {
    double total = 0;
    for (int h = 0; h < game_->num_hands(player); ++h) total += game_->weights(player)[h] * per_hand[player][h];
    result[player] = total / game_->pair_mass();
  }
  return result;
}

std::array<double, 2> HoldemSolver::best_response_values(bool through_locks) {
  return values(through_locks ? Mode::kBestResponseThroughLocks : Mode::kBestResponse);
}
std::array<double, 2> HoldemSolver::average_values() { return values(Mode::kAverage); }
std::array<std::vector<double>, 2> HoldemSolver::best_response_hand_values() { return hand_values(Mode::kBestResponse); }
std::array<std::vector<double>, 2> HoldemSolver::average_hand_values() { return hand_values(Mode::kAverage); }

double HoldemSolver::exploitability(bool through_locks) {
  const auto br = best_response_values(through_locks);
  return (br[0] + br[1]) / 2;
}

template <class T>
void HoldemSolver::average_into(int node_index, T* sigma) const {
  const EndgameNode& node = game_->node(node_index);
  const int32_t lock = lock_of_[node_index];
  if (lock >= 0) {
    std::copy(locks_[lock].begin(), locks_[lock].end(), sigma);
    return;
  }
  if (compressed_) {
    normalise_average(strategy_codes_.data() + node.storage, node.num_children, game_->num_hands(node.player), sigma);
  } else {
    normalise_average(strategy_.data() + node.storage, node.num_children, game_->num_hands(node.player), sigma);
  }
}

std::vector<float> HoldemSolver::average_strategy(int node_index) const {
  const EndgameNode& node = game_->node(node_index);
  if (node.kind != BettingTree::kDecision) throw std::invalid_argument("node " + std::to_string(node_index) + " is not a decision");
  const int hands = game_->num_hands(node.player);
  std::vector<float> sigma(static_cast<size_t>(node.num_children) * hands);
  average_into(node_index, sigma.data());
  return sigma;
}

void HoldemSolver::lock(int node_index, const std::vector<float>& strategy) {
  if (node_index < 0 || node_index >= static_cast<int>(game_->nodes().size())) throw std::invalid_argument("node " + std::to_string(node_index) + " does not exist");
  const EndgameNode& node = game_->node(node_index);
  if (node.kind != BettingTree::kDecision) throw std::invalid_argument("node " + std::to_string(node_index) + " is not a decision: only decisions can be locked");
  if (game_->spec().isomorphism) {
    // A locked strategy need not treat the suits the isomorphism merges alike, and a lock above a
    // deal would break the symmetry of the reach that the merged deals' values rely on.
    throw std::invalid_argument("node locking needs the game built without suit isomorphism (isomorphism=False)");
  }
  const int hands = game_->num_hands(node.player), actions = node.num_children;
  if (strategy.size() != static_cast<size_t>(actions) * hands) {
    throw std::invalid_argument("a strategy at node " + std::to_string(node_index) + " has " + std::to_string(actions) + " x " +
                                std::to_string(hands) + " entries, got " + std::to_string(strategy.size()));
  }
  for (int h = 0; h < hands; ++h) {
    double total = 0;
    for (int a = 0; a < actions; ++a) {
      const float p = strategy[static_cast<size_t>(a) * hands + h];
      if (!(p >= 0) || !std::isfinite(p)) throw std::invalid_argument("hand " + std::to_string(h) + "'s locked strategy has probability " + std::to_string(p));
      total += p;
    }
    if (std::fabs(total - 1) > 1e-4) throw std::invalid_argument("hand " + std::to_string(h) + "'s locked strategy sums to " + std::to_string(total) + ", not 1");
  }
  if (lock_of_[node_index] >= 0) {
    locks_[lock_of_[node_index]] = strategy;
  } else {
    lock_of_[node_index] = static_cast<int32_t>(locks_.size());
    locks_.push_back(strategy);
  }
}

void HoldemSolver::unlock(int node_index) {
  if (node_index < 0 || node_index >= static_cast<int>(game_->nodes().size())) throw std::invalid_argument("node " + std::to_string(node_index) + " does not exist");
  lock_of_[node_index] = -1;  // its strategy stays in locks_ (a few vectors at most), unreferenced
}

std::vector<int> HoldemSolver::locked_nodes() const {
  std::vector<int> nodes;
  for (size_t i = 0; i < lock_of_.size(); ++i) {
    if (lock_of_[i] >= 0) nodes.push_back(static_cast<int>(i));
  }
  return nodes;
}

HoldemSolver::NodeReport HoldemSolver::node_report(int node_index) {
  const HoldemEndgame& g = *game_;
  if (node_index < 0 || node_index >= static_cast<int>(g.nodes().size())) throw std::invalid_argument("node " + std::to_string(node_index) + " does not exist");
  check_leaf_values(0);
  check_leaf_values(1);
  NodeReport report;
  // Reaches down the path: own strategies (and, for the values, the chance probabilities).
  std::array<std::vector<double>, 2> reach, chance_reach;
  for (int p = 0; p < 2; ++p) {
    reach[p] = g.weights(p);
    chance_reach[p] = g.weights(p);
  }
  const std::vector<int> path = g.path_to(node_index);
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    const EndgameNode& n = g.node(path[i]);
    const int next = path[i + 1] - n.first_child;
    if (n.kind == BettingTree::kChance) {
      const double scale = 1.0 / g.chance_divisor(path[i]);
      const int card = dealt_card(g.node(path[i + 1]));
      for (int p = 0; p < 2; ++p) {
        for (double& r : chance_reach[p]) r *= scale;
        for (int32_t h : g.hands_with_card(p, card)) reach[p][h] = chance_reach[p][h] = 0;
      }
    } else if (n.kind == BettingTree::kDecision) {
      const int p = n.player, hands = g.num_hands(p);
      std::vector<double> sigma(static_cast<size_t>(n.num_children) * hands);
      average_into(path[i], sigma.data());
      for (int h = 0; h < hands; ++h) {
        reach[p][h] *= sigma[static_cast<size_t>(next) * hands + h];
        chance_reach[p][h] *= sigma[static_cast<size_t>(next) * hands + h];
      }
    }
  }
  PoolScope scope(pool_, threads_);
  for (int p = 0; p < 2; ++p) {
    const int opp = 1 - p;
    // The chance probabilities go once into the opponent's reach, as in the traversals.
    const std::vector<double>& opp_reach = chance_reach[opp];
    report.values[p].assign(static_cast<size_t>(g.num_hands(p)), 0.0);
    const EndgameNode& n = g.node(node_index);
    if (n.kind == BettingTree::kFold || n.kind == BettingTree::kShowdown) {
      std::vector<double> scratch(g.scratch_size());
      g.terminal_values(node_index, p, opp_reach.data(), report.values[p].data(), scratch.data());
    } else {
      evaluate(node_index, p, Mode::kAverage, opp_reach.data(), report.values[p].data(), 0, true);
    }
    const std::vector<double> mass = g.compatible_mass(p, opp_reach.data());
    report.ev[p].resize(mass.size());
    for (size_t h = 0; h < mass.size(); ++h) {
      report.ev[p][h] = mass[h] > 0 && reach[p][h] > 0 ? report.values[p][h] / mass[h] : std::nan("");
    }
    report.equity[p] = g.equity(node_index, p, reach[opp].data());
    for (size_t h = 0; h < mass.size(); ++h) {
      if (!(reach[p][h] > 0)) report.equity[p][h] = std::nan("");
    }
    report.reach[p] = reach[p];
  }
  return report;
}

void HoldemSolver::current_into(int node_index, float* sigma, Workspace& ws) const {
  const EndgameNode& node = game_->node(node_index);
  const int32_t lock = lock_of_[node_index];
  if (lock >= 0) {
    std::copy(locks_[lock].begin(), locks_[lock].end(), sigma);
    return;
  }
  const int hands = game_->num_hands(node.player);
  const size_t n = static_cast<size_t>(node.num_children) * hands;
  const float* regrets = compressed_ ? nullptr : regrets_.data() + node.storage;
  if (compressed_) {
    float* decoded = ws.f.alloc(n);
    decode(regret_codes_.data() + node.storage, regret_scale_[node_index], n, decoded);
    regrets = decoded;
  }
  regret_match(regrets, node.num_children, hands, sigma, ws.f.alloc(2 * static_cast<size_t>(hands)));
}

std::vector<float> HoldemSolver::current_strategy(int node_index) const {
  const EndgameNode& node = game_->node(node_index);
  if (node.kind != BettingTree::kDecision) throw std::invalid_argument("node " + std::to_string(node_index) + " is not a decision");
  const int hands = game_->num_hands(node.player);
  std::vector<float> sigma(static_cast<size_t>(node.num_children) * hands);
  Workspace scratch;  // the decoded regrets and regret matching's sums
  scratch.f.reserve((static_cast<size_t>(node.num_children) + 2) * (static_cast<size_t>(hands) + 16));
  current_into(node_index, sigma.data(), scratch);
  return sigma;
}

}  // namespace holdem
}  // namespace rebel
