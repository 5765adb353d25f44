#include "nets/reference_nets.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/tree_ops.h"

namespace rebel {

void ZeroNet::compute_values(const LeafQueryBatch& batch, double* out) {
  std::fill(out, out + static_cast<size_t>(batch.size) * num_hands_, 0.0);
}

OracleNet::OracleNet(GamePtr game, SolverParams params, int iterations, OracleValues values)
    : game_(std::move(game)), params_(params), iterations_(iterations), values_(values) {
  if (iterations < 1) throw std::invalid_argument("oracle net: iterations must be >= 1");
}

std::shared_ptr<const PublicTree> OracleNet::subtree(const History& history) {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  auto& slot = cache_[history];
  if (!slot) slot = std::make_shared<const PublicTree>(build_tree(*game_, history, -1));
  return slot;
}

void OracleNet::compute_values(const LeafQueryBatch& batch, double* out) {
  const int H = game_->num_hands();
  if (static_cast<int>(batch.histories.size()) != batch.size) {
    throw std::invalid_argument("oracle net needs the structured view of the queries (histories, beliefs)");
  }
  for (int i = 0; i < batch.size; ++i) {
    Beliefs beliefs{std::vector<double>(batch.beliefs0[i], batch.beliefs0[i] + H),
                    std::vector<double>(batch.beliefs1[i], batch.beliefs1[i] + H)};
    const auto tree = subtree(*batch.histories[i]);
    SubgameSolver solver(game_, tree, beliefs, params_, nullptr);
    solver.run(iterations_);
    const int player = batch.queried_player[i];
    if (values_ == OracleValues::kRootMean) {
      const auto& v = solver.root_values(player);
      std::copy(v.begin(), v.end(), out + static_cast<size_t>(i) * H);
      continue;
    }
    // Best-response values of the queried player against the opponent's average policy,
    // the opponent's reach starting from its normalised beliefs. These are the values a
    // PBS value function needs: hands the average policy never plays (zero belief) still
    // get the value they could obtain, so the search above can move mass towards them.
    const auto& policy = solver.average_policy();
    std::vector<double> opp_reach, values;
    std::vector<int> best_child;
    compute_reach(*tree, H, policy, 1 - player, beliefs[1 - player].data(), &opp_reach);
    fill_terminal_values(*game_, *tree, player, opp_reach, &values);
    backup_best_response(*tree, H, player, &values, &best_child);
    std::copy(values.begin(), values.begin() + H, out + static_cast<size_t>(i) * H);
  }
}

namespace {

// SplitMix64's finaliser: a well-mixed 64-bit hash step (fixed, so errors are the same on
// every platform and build).
uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t hash_floats(uint64_t key, const float* values, int count) {
  for (int i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof bits);
    key = mix64(key ^ bits);
  }
  return key;
}

}  // namespace

LeafErrorKind parse_leaf_error_kind(const std::string& name) {
  if (name == "random") return LeafErrorKind::kRandom;
  if (name == "bias") return LeafErrorKind::kBias;
  if (name == "noise") return LeafErrorKind::kNoise;
  throw std::invalid_argument("leaf error kind must be 'random', 'bias' or 'noise', got '" + name + "'");
}

std::string leaf_error_kind_name(LeafErrorKind kind) {
  switch (kind) {
    case LeafErrorKind::kRandom: return "random";
    case LeafErrorKind::kBias: return "bias";
    case LeafErrorKind::kNoise: return "noise";
  }
  return "?";
}

PerturbedNet::PerturbedNet(ValueNetPtr base, int num_hands, int feature_size, double delta, LeafErrorKind kind,
                           uint64_t seed)
    : base_(std::move(base)), num_hands_(num_hands), feature_size_(feature_size), delta_(delta), kind_(kind),
      seed_(seed) {
  if (!base_) throw std::invalid_argument("perturbed net: the base net is missing");
  if (!std::isfinite(delta) || delta < 0.0) {
    throw std::invalid_argument("leaf error delta must be finite and >= 0, got " + std::to_string(delta));
  }
}

std::string PerturbedNet::name() const {
  std::ostringstream s;
  s << base_->name() << "+" << leaf_error_kind_name(kind_) << "(" << delta_ << ")";
  return s.str();
}

void PerturbedNet::error(const float* row, double* out) const {
  const int H = num_hands_;
  if (kind_ == LeafErrorKind::kBias) {
    const double sign = row[1] == 0.0f ? 1.0 : -1.0;  // row[1]: the queried player
    std::fill(out, out + H, sign * delta_);
    return;
  }
  // kRandom keys on the public part of the row (acting player, queried player, public
  // features); kNoise on the whole row, beliefs included.
  const int keyed = kind_ == LeafErrorKind::kRandom ? 2 + feature_size_ : 2 + feature_size_ + 2 * H;
  const uint64_t key = hash_floats(mix64(seed_), row, keyed);
  double largest = 0.0;
  for (int h = 0; h < H; ++h) {
    // 53 random bits -> uniform in [-1, 1)
    const double u = static_cast<double>(mix64(key + static_cast<uint64_t>(h)) >> 11) * 0x1.0p-52 - 1.0;
    out[h] = u;
    largest = std::max(largest, std::fabs(u));
  }
  // Rescaled so the largest entry is exactly +-delta (x / |x| is exactly +-1 in IEEE).
  for (int h = 0; h < H; ++h) out[h] = largest > 0.0 ? delta_ * (out[h] / largest) : delta_;
}

void PerturbedNet::compute_values(const LeafQueryBatch& batch, double* out) {
  base_->compute_values(batch, out);
  if (delta_ == 0.0) return;  // bit-identical to the base net
  const int H = num_hands_;
  std::vector<double> e(H);
  for (int i = 0; i < batch.size; ++i) {
    error(batch.rows + static_cast<size_t>(i) * batch.row_size, e.data());
    double* v = out + static_cast<size_t>(i) * H;
    for (int h = 0; h < H; ++h) v[h] += e[h];
  }
}

}  // namespace rebel
