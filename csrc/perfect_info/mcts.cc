#include "perfect_info/mcts.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace rebel {
namespace mnk {

void MctsParams::validate() const {
  if (simulations < 1) throw std::invalid_argument("mcts: simulations must be >= 1, got " + std::to_string(simulations));
  if (!(c_puct > 0) || !std::isfinite(c_puct)) throw std::invalid_argument("mcts: c_puct must be finite and > 0");
  if (!(dirichlet_alpha > 0) || !std::isfinite(dirichlet_alpha))
    throw std::invalid_argument("mcts: dirichlet_alpha must be finite and > 0");
  if (!(dirichlet_fraction >= 0 && dirichlet_fraction <= 1))
    throw std::invalid_argument("mcts: dirichlet_fraction must be in [0, 1]");
}

void encode_planes(const Board& board, float* out) {
  const int cells = board.rules().cells();
  std::fill(out, out + kPlanes * cells, 0.0f);
  const int8_t mine = static_cast<int8_t>(board.to_move() + 1);
  for (int c = 0; c < cells; ++c) {
    const int8_t s = board.at(c);
    if (s == 0) continue;
    out[(s == mine ? 0 : 1) * cells + c] = 1.0f;
  }
  if (board.last_move() >= 0) out[2 * cells + board.last_move()] = 1.0f;
  if (board.to_move() == 0) std::fill(out + 3 * cells, out + 4 * cells, 1.0f);
}

SearchTree::SearchTree(const Rules& rules, const MctsParams& params)
    : rules_(rules), params_(params), root_board_(rules) {
  params_.validate();
  nodes_.emplace_back();
}

void SearchTree::reset(const Board& board) {
  if (board.rules().m != rules_.m || board.rules().n != rules_.n || board.rules().k != rules_.k) {
    throw std::invalid_argument("mcts: the board is " + board.rules().description() + ", the search " +
                                rules_.description());
  }
  root_board_ = board;
  nodes_.assign(1, Node{});
  pending_ = -1;
}

void SearchTree::advance(int cell) {
  root_board_.play(cell);  // throws on an illegal move, before the tree changes
  pending_ = -1;
  int child = -1;
  const Node& root = nodes_[0];
  for (int i = 0; i < root.num_children; ++i) {
    if (nodes_[static_cast<size_t>(root.first_child + i)].move == cell) child = root.first_child + i;
  }
  if (!params_.reuse_tree || child < 0) {
    nodes_.assign(1, Node{});
    return;
  }
  // Copy the child's subtree breadth first; children stay contiguous.
  std::vector<Node> kept;
  kept.reserve(nodes_.size());
  kept.push_back(nodes_[static_cast<size_t>(child)]);
  kept[0].parent = -1;
  std::vector<int> origin{child};  // kept[i] came from nodes_[origin[i]]
  for (size_t i = 0; i < kept.size(); ++i) {
    const Node& old = nodes_[static_cast<size_t>(origin[i])];
    if (old.num_children == 0) {
      kept[i].first_child = -1;
      continue;
    }
    kept[i].first_child = static_cast<int>(kept.size());
    for (int j = 0; j < old.num_children; ++j) {
      Node copy = nodes_[static_cast<size_t>(old.first_child + j)];
      copy.parent = static_cast<int>(i);
      kept.push_back(copy);
      origin.push_back(old.first_child + j);
    }
  }
  for (Node& n : kept) n.prior = n.raw_prior;  // the old root's noise does not carry over
  nodes_.swap(kept);
}

int SearchTree::best_child(int node) const {
  const Node& n = nodes_[static_cast<size_t>(node)];
  const double scale = params_.c_puct * std::sqrt(static_cast<double>(std::max(n.visits, 1)));
  int best = -1;
  double best_score = -1e300;
  for (int i = 0; i < n.num_children; ++i) {
    const Node& c = nodes_[static_cast<size_t>(n.first_child + i)];
    const double q = c.visits > 0 ? c.value_sum / c.visits : 0.0;
    const double score = q + scale * c.prior / (1.0 + c.visits);
    if (score > best_score) {
      best_score = score;
      best = n.first_child + i;
    }
  }
  return best;
}

bool SearchTree::select(Board* leaf) {
  if (pending_ >= 0) throw std::logic_error("mcts: select() called while a leaf awaits evaluate()");
  *leaf = root_board_;
  int node = 0;
  while (nodes_[static_cast<size_t>(node)].expanded && !leaf->terminal()) {
    node = best_child(node);
    leaf->play(nodes_[static_cast<size_t>(node)].move);
  }
  if (leaf->terminal()) {
    // The result for the player to move at the leaf (the mover into it won or drew).
    backup(node, static_cast<float>(-leaf->result_for(leaf->to_move())));
    return false;
  }
  pending_ = node;
  return true;
}

void SearchTree::evaluate(const float* priors, float value) {
  if (pending_ < 0) throw std::logic_error("mcts: evaluate() without a pending leaf");
  const int node = pending_;
  pending_ = -1;
  // The leaf's position: replay the moves from the root.
  std::vector<int> path;
  for (int i = node; i > 0; i = nodes_[static_cast<size_t>(i)].parent) path.push_back(nodes_[static_cast<size_t>(i)].move);
  Board board = root_board_;
  for (auto it = path.rbegin(); it != path.rend(); ++it) board.play(*it);
  board.legal_moves(&legal_);
  double total = 0.0;
  for (int c : legal_) total += std::max(0.0f, std::isfinite(priors[c]) ? priors[c] : 0.0f);
  const int first = static_cast<int>(nodes_.size());
  for (int c : legal_) {
    Node child;
    child.parent = node;
    child.move = c;
    const double p = std::max(0.0f, std::isfinite(priors[c]) ? priors[c] : 0.0f);
    child.prior = child.raw_prior = static_cast<float>(total > 0 ? p / total : 1.0 / legal_.size());
    nodes_.push_back(child);
  }
  Node& n = nodes_[static_cast<size_t>(node)];
  n.first_child = first;
  n.num_children = static_cast<int>(legal_.size());
  n.expanded = true;
  const float v = std::isfinite(value) ? std::clamp(value, -1.0f, 1.0f) : 0.0f;
  backup(node, -v);
}

void SearchTree::backup(int node, float value_for_mover_at_node) {
  float v = value_for_mover_at_node;
  for (int i = node; i >= 0; i = nodes_[static_cast<size_t>(i)].parent) {
    Node& n = nodes_[static_cast<size_t>(i)];
    n.visits += 1;
    n.value_sum += v;
    v = -v;
  }
}

void SearchTree::add_root_noise(std::mt19937_64* rng) {
  Node& root = nodes_[0];
  if (!root.expanded || root.num_children == 0 || params_.dirichlet_fraction <= 0) return;
  std::gamma_distribution<double> gamma(params_.dirichlet_alpha, 1.0);
  std::vector<double> noise(static_cast<size_t>(root.num_children));
  double total = 0.0;
  for (double& x : noise) total += (x = gamma(*rng));
  const double eps = params_.dirichlet_fraction;
  for (int i = 0; i < root.num_children; ++i) {
    Node& c = nodes_[static_cast<size_t>(root.first_child + i)];
    const double eta = total > 0 ? noise[static_cast<size_t>(i)] / total : 1.0 / root.num_children;
    c.prior = static_cast<float>((1 - eps) * c.raw_prior + eps * eta);
  }
}

void SearchTree::root_visit_counts(int* out) const {
  std::fill(out, out + rules_.cells(), 0);
  const Node& root = nodes_[0];
  for (int i = 0; i < root.num_children; ++i) {
    const Node& c = nodes_[static_cast<size_t>(root.first_child + i)];
    out[c.move] = c.visits;
  }
}

double SearchTree::root_value() const {
  const Node& root = nodes_[0];
  return root.visits > 0 ? -root.value_sum / root.visits : 0.0;
}

MctsBatch::MctsBatch(const Rules& rules, const MctsParams& params, int num_games, uint64_t seed)
    : rules_(rules), params_(params), rng_(seed) {
  rules_.validate();
  params_.validate();
  if (num_games < 1) throw std::invalid_argument("mcts: num_games must be >= 1, got " + std::to_string(num_games));
  trees_.reserve(static_cast<size_t>(num_games));
  for (int i = 0; i < num_games; ++i) trees_.emplace_back(rules_, params_);
  remaining_.assign(static_cast<size_t>(num_games), 0);
  noise_pending_.assign(static_cast<size_t>(num_games), 0);
}

void MctsBatch::begin(const std::vector<int>& games, bool root_noise) {
  for (int g : games) {
    if (g < 0 || g >= num_games()) throw std::invalid_argument("mcts: game index " + std::to_string(g) + " out of range");
    if (trees_[static_cast<size_t>(g)].board().terminal()) {
      throw std::invalid_argument("mcts: game " + std::to_string(g) + " is over; nothing to search");
    }
  }
  for (int g : games) {
    remaining_[static_cast<size_t>(g)] = params_.simulations;
    SearchTree& t = trees_[static_cast<size_t>(g)];
    // Noise goes on an expanded root: now if the reused tree has one, else after its expansion.
    noise_pending_[static_cast<size_t>(g)] = root_noise ? 1 : 0;
    if (root_noise && t.root_expanded()) {
      t.add_root_noise(&rng_);
      noise_pending_[static_cast<size_t>(g)] = 0;
    }
  }
}

bool MctsBatch::select(std::vector<int>* games_out, std::vector<float>* planes_out, const std::atomic<bool>* cancel) {
  const int cells = rules_.cells();
  games_out->clear();
  planes_out->clear();
  Board leaf(rules_);
  bool any = false;
  for (int g = 0; g < num_games(); ++g) {
    if (cancel != nullptr && cancel->load()) throw std::runtime_error("mcts: cancelled");
    int& left = remaining_[static_cast<size_t>(g)];
    SearchTree& t = trees_[static_cast<size_t>(g)];
    while (left > 0) {
      any = true;
      if (t.select(&leaf)) {
        games_out->push_back(g);
        planes_out->resize(games_out->size() * static_cast<size_t>(kPlanes * cells));
        encode_planes(leaf, planes_out->data() + (games_out->size() - 1) * static_cast<size_t>(kPlanes * cells));
        break;
      }
      --left;  // a terminal leaf: one simulation done without the net
    }
  }
  selected_ = *games_out;
  return any;
}

void MctsBatch::evaluate(const float* priors, const float* values) {
  const int cells = rules_.cells();
  for (size_t i = 0; i < selected_.size(); ++i) {
    const int g = selected_[i];
    SearchTree& t = trees_[static_cast<size_t>(g)];
    t.evaluate(priors + i * static_cast<size_t>(cells), values[i]);
    remaining_[static_cast<size_t>(g)] -= 1;
    if (noise_pending_[static_cast<size_t>(g)] && t.root_expanded()) {
      t.add_root_noise(&rng_);
      noise_pending_[static_cast<size_t>(g)] = 0;
    }
  }
  selected_.clear();
}

std::vector<int> rollout_search(const Board& board, int playouts, uint64_t seed, double c_puct,
                                const std::atomic<bool>* cancel) {
  if (playouts < 1) throw std::invalid_argument("mcts: playouts must be >= 1, got " + std::to_string(playouts));
  if (board.terminal()) throw std::invalid_argument("mcts: the game is over; nothing to search");
  MctsParams params;
  params.simulations = playouts;
  params.c_puct = c_puct;
  params.reuse_tree = false;
  SearchTree tree(board.rules(), params);
  tree.reset(board);
  std::mt19937_64 rng(seed);
  const int cells = board.rules().cells();
  const std::vector<float> uniform(static_cast<size_t>(cells), 1.0f);
  Board leaf(board.rules());
  std::vector<int> empty;
  for (int i = 0; i < playouts; ++i) {
    if (cancel != nullptr && (i & 63) == 0 && cancel->load()) throw std::runtime_error("mcts: cancelled");
    if (!tree.select(&leaf)) continue;
    // A random game from the leaf; its result for the player to move at the leaf.
    const int mover = leaf.to_move();
    Board play = leaf;
    play.legal_moves(&empty);
    while (!play.terminal()) {
      std::uniform_int_distribution<size_t> pick(0, empty.size() - 1);
      const size_t j = pick(rng);
      const int cell = empty[j];
      empty[j] = empty.back();
      empty.pop_back();
      play.play(cell);
    }
    tree.evaluate(uniform.data(), static_cast<float>(play.result_for(mover)));
  }
  std::vector<int> counts(static_cast<size_t>(cells));
  tree.root_visit_counts(counts.data());
  return counts;
}

}  // namespace mnk
}  // namespace rebel
