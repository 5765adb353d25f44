#include "search/policy_start.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/tree_ops.h"
#include "core/value_net.h"

namespace rebel {

std::vector<double> policy_net_start(const Game& game, const PublicTree& t, const Beliefs& root_beliefs,
                                     PolicyNet& net) {
  check_tree_game(game, t);
  const int H = game.num_hands(), A = game.num_actions(), row_size = query_size(game);
  std::vector<double> sigma0 = uniform_policy(game, t);
  std::array<std::vector<double>, 2> reach;
  for (int p = 0; p < 2; ++p) {
    const std::vector<double> root = checked_beliefs(root_beliefs[p], H, p == 0 ? "root beliefs0" : "root beliefs1");
    reach[p].assign(static_cast<size_t>(t.size()) * H, 0.0);
    std::copy(root.begin(), root.end(), reach[p].begin());
  }
  // Breadth-first order lists the nodes level by level; `level[n]` is n's distance from the root.
  std::vector<int> level(t.size(), 0);
  for (int n = 1; n < t.size(); ++n) level[n] = level[t.parent[n]] + 1;

  std::vector<int> queried;
  std::vector<float> rows;
  std::vector<double> beliefs(2 * static_cast<size_t>(H)), out;
  PolicyQueryBatch batch;
  for (int begin = 0; begin < t.size();) {
    int end = begin;
    while (end < t.size() && level[end] == level[begin]) ++end;
    // Reaches of this level from the parents' (whose sigma0 rows are set by now).
    for (int n = begin; n < end; ++n) {
      const int parent = t.parent[n];
      if (parent < 0) continue;
      const double* factors = t.chance_factors_at(parent);
      const int k = n - t.first_child[parent];
      for (int p = 0; p < 2; ++p) {
        const double* from = &reach[p][static_cast<size_t>(parent) * H];
        double* to = &reach[p][static_cast<size_t>(n) * H];
        for (int h = 0; h < H; ++h) {
          double r = from[h];
          if (factors) r *= factors[static_cast<size_t>(k) * H + h];
          else if (t.player[parent] == p) r *= sigma0[static_cast<size_t>(n) * H + h];
          to[h] = r;
        }
      }
    }
    // Every decision node is queried, also those a player reaches with mass 0 (their
    // normalised beliefs are then uniform): the responses to the opponent's deviations are
    // part of the policy, and starting them uniform made a warm start from an exact
    // equilibrium worse than a cold start (m,n,k 2x3x3, T = 8: 0.13 against 0.013).
    queried.clear();
    for (int n = begin; n < end; ++n) {
      if (t.kind[n] == NodeKind::kDecision) queried.push_back(n);
    }
    begin = end;
    if (queried.empty()) continue;
    const int B = static_cast<int>(queried.size());
    rows.assign(static_cast<size_t>(B) * row_size, 0.0f);
    batch.size = B;
    batch.row_size = row_size;
    batch.histories.clear();
    for (int i = 0; i < B; ++i) {
      const int n = queried[i];
      for (int p = 0; p < 2; ++p) normalize_beliefs(&reach[p][static_cast<size_t>(n) * H], H, &beliefs[p * H]);
      write_query_row(game, t.history[n], t.player[n], t.player[n], &beliefs[0], &beliefs[H],
                      &rows[static_cast<size_t>(i) * row_size]);
      batch.histories.push_back(&t.history[n]);
    }
    batch.rows = rows.data();
    out.assign(static_cast<size_t>(B) * H * A, 0.0);
    net.compute_policies(batch, out.data());
    for (int i = 0; i < B; ++i) {
      const int n = queried[i];
      for (int h = 0; h < H; ++h) {
        const double* o = &out[(static_cast<size_t>(i) * H + h) * A];
        double total = 0.0;
        for (int c = t.first_child[n]; c < t.first_child[n] + t.num_children[n]; ++c) {
          const double q = o[t.action[c]];
          if (!std::isfinite(q) || q < 0.0) {
            std::ostringstream msg;
            msg << "policy net '" << net.name() << "' gave probability " << q << " to action "
                << game.action_name(t.action[c]) << " (hand " << game.hand_name(h) << ")";
            throw std::invalid_argument(msg.str());
          }
          sigma0[static_cast<size_t>(c) * H + h] = q;
          total += q;
        }
        if (!(std::abs(total - 1.0) <= 1e-6)) {
          std::ostringstream msg;
          msg << "policy net '" << net.name() << "' gives hand " << game.hand_name(h)
              << " legal-action probabilities summing to " << total << ", not 1";
          throw std::invalid_argument(msg.str());
        }
      }
    }
  }
  return sigma0;
}

}  // namespace rebel
