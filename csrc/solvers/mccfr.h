// Chance-sampling Monte Carlo CFR (Lanctot, Waugh, Zinkevich, Bowling 2009) on a full
// public game tree.
//
// Each iteration samples one deal (h0, h1) from the game's joint hand distribution
// (P(h0) = prior, P(h1 | h0) proportional to prior(h1) * hand_pair_weight(h0, h1), so
// card removal is respected) and then runs vanilla CFR over every public action of both
// players for that deal, updating both players at once. Regrets and average-strategy
// sums are tables indexed like a tree policy: [child * H + hand], i.e. by (public node,
// hand of the player acting at the parent) -- exactly the information sets.
//
// Because chance is sampled with its own probabilities, the importance weight cancels:
// regrets move by pi_{-i} * (v(a) - v) and the average by pi_i * sigma, where pi are the
// players' own reach probabilities for the sampled deal.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "core/game.h"
#include "core/tree.h"

namespace rebel {

class MccfrSolver {
 public:
  // `tree` must be the full game tree (rooted at the game's start, no pseudo-leaves) of
  // `game`; throws std::invalid_argument otherwise.
  MccfrSolver(GamePtr game, std::shared_ptr<const PublicTree> tree, uint64_t seed);
  ~MccfrSolver();
  MccfrSolver(const MccfrSolver&) = delete;
  MccfrSolver& operator=(const MccfrSolver&) = delete;

  void run(long iterations);  // throws std::invalid_argument for iterations < 0
  long iterations() const { return iterations_; }
  uint64_t seed() const { return seed_; }

  // Policies in the tree layout (policy[child * H + h]); information sets never reached
  // with positive own reach get the uniform policy.
  std::vector<double> average_policy() const;
  std::vector<double> current_policy() const;  // regret matching on the current regrets

  const Game& game() const { return *game_; }
  const PublicTree& tree() const { return *tree_; }

 private:
  class DealUtility;

  void iterate();
  std::pair<int, int> sample_deal();
  // Samples one outcome of the chance node `node` for the deal (h0, h1); sigma_ of its
  // children becomes 1 there and 0 elsewhere.
  void sample_outcome(int node, int h0, int h1);
  double uniform01();

  GamePtr game_;
  std::shared_ptr<const PublicTree> tree_;
  int H_;
  uint64_t seed_;
  std::mt19937_64 rng_;
  long iterations_ = 0;

  std::vector<double> regrets_, strategy_sum_;   // [node * H + hand]
  std::vector<double> prior_cdf_;                // cumulative prior, for sampling h0
  std::unique_ptr<DealUtility> utility_;         // player 0's payoff per terminal and deal
  // Per-iteration scratch, one entry per node: both reaches, the probability of the
  // action leading to the node, and player 0's value for the sampled deal.
  std::vector<double> reach0_, reach1_, sigma_, value_;
};

}  // namespace rebel
