// Liar's Dice exactly as in the ReBeL paper (Brown et al., NeurIPS 2020):
// each player rolls D dice with F faces; hand id encodes dice as base-F digits, least
// significant first. Bid (quantity q in 1..2D, face f) has id (q-1)*F + f, "liar" is 2DF.
// Face F-1 is wild. On "liar" the bidder wins iff at least q dice (both hands) count
// for the bid's face.
#include <algorithm>
#include <cstdint>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/registry.h"
#include "core/tree.h"

namespace rebel {
namespace {

constexpr double kMaxHands = 1 << 24;
constexpr double kMaxTableCells = 1 << 24;

class LiarsDice final : public Game {
 public:
  LiarsDice(int num_dice, int num_faces) : dice_(num_dice), faces_(num_faces) {
    if (num_dice < 1) throw std::invalid_argument("liars_dice: num_dice must be >= 1, got " + std::to_string(num_dice));
    if (num_faces < 2) throw std::invalid_argument("liars_dice: num_faces must be >= 2, got " + std::to_string(num_faces));
    const double hands = std::pow(static_cast<double>(num_faces), num_dice);
    if (hands > kMaxHands || 2.0 * num_dice * num_faces + 1 > 1e6) {
      throw std::invalid_argument("liars_dice: " + std::to_string(num_dice) + " dice with " +
                                  std::to_string(num_faces) + " faces give " + std::to_string(hands) +
                                  " hands per player; at most 2^24 are supported");
    }
    // The face x hand table below (and the tree sizes) grow with faces * hands: bounded so
    // that a parameter in range cannot ask for gigabytes (e.g. 1 die with 400000 faces).
    if (hands * num_faces > kMaxTableCells) {
      throw std::invalid_argument("liars_dice: " + std::to_string(num_dice) + " dice with " +
                                  std::to_string(num_faces) + " faces need a faces x hands table of " +
                                  std::to_string(static_cast<long long>(hands * num_faces)) +
                                  " entries; at most 2^24 are supported");
    }
    hands_ = static_cast<int>(hands);
    num_bids_ = 2 * dice_ * faces_;
    prior_.assign(hands_, 1.0 / hands_);
    matches_.assign(static_cast<size_t>(faces_) * hands_, 0);
    for (int h = 0; h < hands_; ++h) {
      int rest = h;
      for (int d = 0; d < dice_; ++d) {
        const int die = rest % faces_;
        rest /= faces_;
        for (int f = 0; f < faces_; ++f) {
          if (die == f || die == faces_ - 1) ++matches_[static_cast<size_t>(f) * hands_ + h];
        }
      }
    }
    // 0/1 masks "hand has >= k dice counting for face f" turn the terminal values' mass
    // counts into dot products that vectorise (skipped when they would be large).
    if (static_cast<double>(faces_) * dice_ * hands_ <= (1 << 22)) {
      at_least_masks_.assign(static_cast<size_t>(faces_) * dice_ * hands_, 0.0);
      for (int f = 0; f < faces_; ++f) {
        for (int k = 1; k <= dice_; ++k) {
          double* mask = &at_least_masks_[(static_cast<size_t>(f) * dice_ + (k - 1)) * hands_];
          for (int h = 0; h < hands_; ++h) mask[h] = matches_[static_cast<size_t>(f) * hands_ + h] >= k ? 1.0 : 0.0;
        }
      }
    }
    // For terminal_values_batch: per bid and hand, the index into at_least of the bidder's
    // winning mass (dice_ + 1: a slot holding 0, the bid cannot be made).
    if ((dice_ == 1 || !at_least_masks_.empty()) && 2.0 * num_bids_ * hands_ <= (1 << 23)) {
      needed_index_.resize(static_cast<size_t>(num_bids_) * hands_);
      bid_face_.resize(num_bids_);
      for (int bid = 0; bid < num_bids_; ++bid) bid_face_[bid] = bid % faces_;
      for (int bid = 0; bid < num_bids_; ++bid) {
        const int quantity = bid / faces_ + 1;
        for (int x = 0; x < hands_; ++x) {
          const int needed = std::max(0, quantity - matches_[static_cast<size_t>(bid % faces_) * hands_ + x]);
          needed_index_[static_cast<size_t>(bid) * hands_ + x] = static_cast<uint8_t>(needed > dice_ ? dice_ + 1 : needed);
        }
      }
    }
  }

  std::string name() const override { return "liars_dice"; }
  GameParams params() const override { return {{"num_dice", dice_}, {"num_faces", faces_}}; }
  int num_hands() const override { return hands_; }
  int num_actions() const override { return num_bids_ + 1; }
  const std::vector<double>& hand_prior() const override { return prior_; }

  bool is_terminal(const History& h) const override { return !h.empty() && h.back() == liar(); }
  int player_to_act(const History& h) const override { return static_cast<int>(h.size() % 2); }

  void legal_actions(const History& h, std::vector<Action>* out) const override {
    out->clear();
    const int first = h.empty() ? 0 : h.back() + 1;
    for (int a = first; a < num_bids_; ++a) out->push_back(a);
    if (!h.empty()) out->push_back(liar());
  }

  void terminal_values(const History& h, int player, const double* opp_reach,
                       double* out) const override {
    const int bid = h[h.size() - 2];
    const int caller = static_cast<int>((h.size() - 1) % 2);
    const int quantity = bid / faces_ + 1;
    const int* matches = &matches_[static_cast<size_t>(bid % faces_) * hands_];
    // at_least[k]: opponent reach mass whose hand has >= k matching dice.
    double at_least[kMaxDicePlusTwo];
    std::fill(at_least, at_least + dice_ + 2, 0.0);
    if (dice_ == 1 || !at_least_masks_.empty()) {
      // Masked dot products: at_least[0] is the total, at_least[k] one product each.
      for (int o = 0; o < hands_; ++o) at_least[0] += opp_reach[o];
      if (dice_ == 1) {
        // One die each: the mask has at most two ones (the face and the wild face), so
        // this is the masked dot product's exact result without its loop.
        const int face = bid % faces_, wild = faces_ - 1;
        at_least[1] = face == wild ? opp_reach[wild] : opp_reach[face] + opp_reach[wild];
      } else {
        const double* masks = &at_least_masks_[static_cast<size_t>(bid % faces_) * dice_ * hands_];
        for (int k = 1; k <= dice_; ++k) {
          const double* mask = masks + static_cast<size_t>(k - 1) * hands_;
          double mass = 0.0;
          for (int o = 0; o < hands_; ++o) mass += mask[o] * opp_reach[o];
          at_least[k] = mass;
        }
      }
    } else {
      for (int o = 0; o < hands_; ++o) at_least[matches[o]] += opp_reach[o];
      for (int k = dice_ - 1; k >= 0; --k) at_least[k] += at_least[k + 1];
    }
    const double total = at_least[0];
    const double sign = (player == caller) ? -1.0 : 1.0;  // +1 for the bidder
    for (int x = 0; x < hands_; ++x) {
      const int needed = std::max(0, quantity - matches[x]);
      const double bidder_wins = needed > dice_ ? 0.0 : at_least[needed];
      out[x] = sign * (2.0 * bidder_wins - total);
    }
  }

  // The same arithmetic as terminal_values() in the same order (bit-identical), with the bid
  // read from the tree (the action into the terminal's parent), the caller from the parent's
  // player, no virtual call per node, and hand counts fixed at compile time for the small games.
  void terminal_values_batch(const PublicTree& tree, int player, const double* opp_reach,
                             double* values) const override {
    if (needed_index_.empty()) return Game::terminal_values_batch(tree, player, opp_reach, values);
    if (hands_ == 4 && dice_ == 1) return batch<4, 1>(tree, player, opp_reach, values);
    if (hands_ == 6 && dice_ == 1) return batch<6, 1>(tree, player, opp_reach, values);
    if (hands_ == 9 && dice_ == 2) return batch<9, 2>(tree, player, opp_reach, values);
    if (dice_ == 1) return batch<0, 1>(tree, player, opp_reach, values);
    return batch<0, 0>(tree, player, opp_reach, values);
  }

  int feature_size() const override { return num_bids_; }
  void public_features(const History& h, float* out) const override {
    std::fill(out, out + num_bids_, 0.0f);
    if (!h.empty() && h.back() < num_bids_) out[h.back()] = 1.0f;
  }

  std::string action_name(Action a) const override {
    if (a == liar()) return "liar";
    return std::to_string(a / faces_ + 1) + "x" + std::to_string(a % faces_);
  }
  std::string hand_name(int hand) const override {
    std::string s;
    for (int d = 0; d < dice_; ++d, hand /= faces_) s += std::to_string(hand % faces_);
    return s;
  }

  // Closed form: the subtree size depends only on the last bid and the depth left.
  double count_tree_nodes(const History& root, int max_depth, double cap) const override {
    if (is_terminal(root)) return 1.0;
    const int depth = (max_depth < 0 || max_depth > num_bids_ + 1) ? num_bids_ + 1 : max_depth;
    // below[b] = size of the subtree under "last bid b" with `d` actions left.
    std::vector<double> below(num_bids_, 1.0), next(num_bids_);
    for (int d = 1; d <= depth - 1; ++d) {
      double suffix = 0.0;
      for (int b = num_bids_ - 1; b >= 0; --b) {
        next[b] = 2.0 + suffix;  // itself + liar + later bids
        suffix += below[b];
      }
      below.swap(next);
    }
    if (depth == 0) return 1.0;
    const int first = root.empty() ? 0 : root.back() + 1;
    double total = 1.0 + (root.empty() ? 0.0 : 1.0);
    for (int b = first; b < num_bids_; ++b) total += below[b];
    (void)cap;
    return total;
  }

 private:
  static constexpr int kMaxDicePlusTwo = 2 * 32 + 2;
  Action liar() const { return num_bids_; }

  template <int kHands, int kDice>
  void batch(const PublicTree& tree, int player, const double* opp_reach, double* values) const {
    const int H = kHands > 0 ? kHands : hands_;
    const int D = kDice > 0 ? kDice : dice_;
    const int wild = faces_ - 1;
    for (int n : tree.terminal_nodes) {
      const double* r = opp_reach + static_cast<size_t>(n) * H;
      double* out = values + static_cast<size_t>(n) * H;
      const int parent = n > 0 ? tree.parent[n] : -1;
      const int bid = parent >= 0 ? tree.action[parent] : -1;
      if (bid < 0) {  // the bid is in the subtree root's history
        terminal_values(tree.history[n], player, r, out);
        continue;
      }
      const int face = bid_face_[bid];
      double at_least[kMaxDicePlusTwo];
      double total = 0.0;
      for (int o = 0; o < H; ++o) total += r[o];
      at_least[0] = total;
      if (D == 1) {
        at_least[1] = face == wild ? r[wild] : r[face] + r[wild];
      } else {
        const double* masks = &at_least_masks_[static_cast<size_t>(face) * D * H];
        double mass[kMaxDicePlusTwo];
        for (int k = 0; k < D; ++k) mass[k] = 0.0;
        // Each mass[k] is summed over o in order, as in terminal_values(); the chains interleave.
        for (int o = 0; o < H; ++o) {
          for (int k = 0; k < D; ++k) mass[k] += masks[static_cast<size_t>(k) * H + o] * r[o];
        }
        for (int k = 0; k < D; ++k) at_least[k + 1] = mass[k];
      }
      at_least[D + 1] = 0.0;
      const double sign = player == tree.player[parent] ? -1.0 : 1.0;  // the parent's player calls
      // The D + 2 possible values, then one per hand (the same expression per hand).
      double value[kMaxDicePlusTwo];
      for (int k = 0; k <= D + 1; ++k) value[k] = sign * (2.0 * at_least[k] - total);
      const uint8_t* index = &needed_index_[static_cast<size_t>(bid) * H];
      for (int x = 0; x < H; ++x) out[x] = value[index[x]];
    }
  }

  int dice_, faces_, hands_ = 0, num_bids_ = 0;
  std::vector<double> prior_;
  std::vector<int> matches_;  // [face][hand]: dice counting for face
  std::vector<double> at_least_masks_;  // [face][k-1][hand]: matches >= k
  std::vector<uint8_t> needed_index_;   // [bid][hand]: see the constructor
  std::vector<int> bid_face_;           // [bid]: bid % faces_ (with needed_index_)
};

GamePtr create_liars_dice(const GameParams& p) {
  int dice = 1, faces = 4;
  for (const auto& [k, v] : p) {
    if (k == "num_dice") dice = v;
    if (k == "num_faces") faces = v;
  }
  if (dice > 32) throw std::invalid_argument("liars_dice: num_dice must be <= 32, got " + std::to_string(dice));
  return std::make_shared<LiarsDice>(dice, faces);
}

REBEL_REGISTER_GAME((GameSpec{"liars_dice", "Liar's Dice (ReBeL paper rules, face F-1 wild)",
                              {{"num_dice", 1}, {"num_faces", 4}}, create_liars_dice}));

}  // namespace
}  // namespace rebel
