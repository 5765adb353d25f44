#include "core/game.h"

#include <sstream>
#include <stdexcept>

#include "core/tree.h"

namespace rebel {

namespace {
double count_nodes_rec(const Game& game, History& history, int depth_left, double cap,
                       double count) {
  count += 1;
  if (count > cap || depth_left == 0 || game.is_terminal(history)) return count;
  std::vector<Action> actions;
  game.legal_actions(history, &actions);
  for (Action a : actions) {
    history.push_back(a);
    count = count_nodes_rec(game, history, depth_left - 1, cap, count);
    history.pop_back();
    if (count > cap) break;
  }
  return count;
}
}  // namespace

double Game::count_tree_nodes(const History& root, int max_depth, double cap) const {
  History history = root;
  return count_nodes_rec(*this, history, max_depth, cap, 0.0);
}

void Game::terminal_values_batch(const PublicTree& tree, int player, const double* opp_reach,
                                 double* values) const {
  const size_t H = static_cast<size_t>(num_hands());
  for (int n : tree.terminal_nodes) {
    const size_t i = static_cast<size_t>(n) * H;
    terminal_values(tree.history[n], player, opp_reach + i, values + i);
  }
}

void Game::chance_factors(const History& /*history*/, Action /*outcome*/, double* /*out*/) const {
  throw std::logic_error(description() + " has no public chance nodes");
}

std::vector<char> possible_hands(const Game& game, const History& history) {
  const int H = game.num_hands();
  std::vector<char> possible(H, 1);
  if (!game.has_public_chance()) return possible;
  History prefix;
  std::vector<double> factors(H);
  for (Action event : history) {
    if (!game.is_terminal(prefix) && game.player_to_act(prefix) == kChancePlayer) {
      game.chance_factors(prefix, event, factors.data());
      for (int h = 0; h < H; ++h) {
        if (factors[h] == 0.0) possible[h] = 0;
      }
    }
    prefix.push_back(event);
  }
  return possible;
}

std::string Game::description() const {
  std::ostringstream out;
  out << name() << "(";
  bool first = true;
  for (const auto& [key, value] : params()) {
    out << (first ? "" : ", ") << key << "=" << value;
    first = false;
  }
  out << ")";
  return out.str();
}

}  // namespace rebel
