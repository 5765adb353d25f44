// Python bindings: hold'em endgames (the expanded tree of a spot, its terminal values) and
// their full-game solvers. rebel/games/holdem_endgame.py wraps these for users; construction,
// iterations and evaluations run without the GIL, and iterations stop on Ctrl-C.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bindings/common.h"
#include "games/holdem_cards.h"
#include "games/holdem_endgame.h"
#include "solvers/holdem_cfr.h"

namespace rebel_bindings {

using namespace rebel;
using holdem::BettingTree;
using holdem::HoldemEndgame;
using holdem::HoldemSolver;

namespace {

// An integer numpy array of the given shape (-1 = any), read exactly as int64 (a float or
// bool array is a TypeError, not a cast).
std::vector<int64_t> to_int_vector(const py::handle& obj, const std::vector<py::ssize_t>& shape, const std::string& what) {
  if (!py::isinstance<py::array>(obj)) throw py::type_error(what + " must be an integer numpy array");
  py::array a = py::reinterpret_borrow<py::array>(obj);
  const char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u') throw py::type_error(what + " must have an integer dtype, got " + std::string(py::str(a.dtype())));
  check_shape(a, shape, what);
  py::array wide = a.attr("astype")(py::dtype::of<int64_t>());
  auto c = py::array_t<int64_t, py::array::c_style>::ensure(wide);
  return std::vector<int64_t>(c.data(), c.data() + c.size());
}

template <class T>
std::vector<T> narrow(const std::vector<int64_t>& v, int64_t lo, int64_t hi, const std::string& what) {
  std::vector<T> out;
  out.reserve(v.size());
  for (int64_t x : v) {
    if (x < lo || x > hi) throw py::value_error(what + " holds " + std::to_string(x) + ", outside " + std::to_string(lo) + ".." + std::to_string(hi));
    out.push_back(static_cast<T>(x));
  }
  return out;
}

std::vector<holdem::HoleCards> hands_of(const py::handle& obj, const std::string& what) {
  const std::vector<int64_t> flat = to_int_vector(obj, {-1, 2}, what);
  std::vector<holdem::HoleCards> hands;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) {
    if (flat[i] < 0 || flat[i] > 51 || flat[i + 1] < 0 || flat[i + 1] > 51) {
      throw py::value_error(what + " row " + std::to_string(i / 2) + " holds a card outside 0..51");
    }
    hands.push_back({static_cast<int>(flat[i]), static_cast<int>(flat[i + 1])});
  }
  return hands;
}

py::array_t<float> strategy_array(const std::vector<float>& sigma, int actions, int hands) {
  py::array_t<float> out({static_cast<py::ssize_t>(actions), static_cast<py::ssize_t>(hands)});
  std::copy(sigma.begin(), sigma.end(), out.mutable_data());
  return out;
}

// Per-hand root values of both players, (oop, ip) float64 arrays: best response or average.
py::tuple hand_values_tuple(HoldemSolver& s, bool best_response) {
  std::array<std::vector<double>, 2> v;
  {
    py::gil_scoped_release release;
    v = best_response ? s.best_response_hand_values() : s.average_hand_values();
  }
  return py::make_tuple(to_array_1d(v[0]), to_array_1d(v[1]));
}

const char* kind_name(int kind) {
  switch (kind) {
    case BettingTree::kDecision: return "decision";
    case BettingTree::kChance: return "chance";
    case BettingTree::kFold: return "fold";
    case BettingTree::kLeaf: return "leaf";
    default: return "showdown";
  }
}

void check_node(const HoldemEndgame& g, int node) {
  if (node < 0 || node >= static_cast<int>(g.nodes().size())) {
    throw py::index_error("node " + std::to_string(node) + " is outside 0.." + std::to_string(g.nodes().size() - 1));
  }
}

void check_player(int player) {
  if (player != 0 && player != 1) throw py::value_error("player must be 0 (OOP) or 1 (IP), got " + std::to_string(player));
}

}  // namespace

void bind_holdem_endgame(py::module_& m) {
  py::class_<HoldemEndgame, std::shared_ptr<HoldemEndgame>>(
      m, "HoldemEndgame",
      "A hold'em endgame spot expanded over its dealt cards (csrc/games/holdem_endgame.h). Build it with "
      "rebel.games.holdem_endgame.build_endgame(spot); the constructor takes the betting tree's arrays.")
      .def(py::init([](const std::vector<int>& board, const std::vector<int>& deck, const py::object& hands0,
                       const py::object& weights0, const py::object& hands1, const py::object& weights1,
                       const py::object& kind, const py::object& player, const py::object& street,
                       const py::object& child_start, const py::object& children, const py::object& invested,
                       const std::vector<std::string>& labels, bool isomorphism) {
             holdem::EndgameSpec spec;
             spec.isomorphism = isomorphism;
             spec.board = board;
             spec.deck = deck;
             spec.hands[0] = hands_of(hands0, "hands0");
             spec.hands[1] = hands_of(hands1, "hands1");
             spec.weights[0] = to_double_vector(weights0, {static_cast<py::ssize_t>(spec.hands[0].size())}, "weights0");
             spec.weights[1] = to_double_vector(weights1, {static_cast<py::ssize_t>(spec.hands[1].size())}, "weights1");
             BettingTree& t = spec.tree;
             t.kind = narrow<int8_t>(to_int_vector(kind, {-1}, "kind"), 0, 4, "kind");
             const py::ssize_t n = static_cast<py::ssize_t>(t.kind.size());
             t.player = narrow<int8_t>(to_int_vector(player, {n}, "player"), -1, 1, "player");
             t.street = narrow<int8_t>(to_int_vector(street, {n}, "street"), 0, 2, "street");
             t.child_start = narrow<int32_t>(to_int_vector(child_start, {n + 1}, "child_start"), 0, INT32_MAX, "child_start");
             t.children = narrow<int32_t>(to_int_vector(children, {-1}, "children"), 0, INT32_MAX, "children");
             t.invested = to_double_vector(invested, {n, 2}, "invested");
             t.labels = labels;
             py::gil_scoped_release release;
             return std::make_shared<HoldemEndgame>(std::move(spec));
           }),
           py::arg("board"), py::arg("deck"), py::arg("hands0"), py::arg("weights0"), py::arg("hands1"),
           py::arg("weights1"), py::arg("kind"), py::arg("player"), py::arg("street"), py::arg("child_start"),
           py::arg("children"), py::arg("invested"), py::arg("labels"), py::arg("isomorphism") = false)
      .def_property_readonly("isomorphism", [](const HoldemEndgame& g) { return g.spec().isomorphism; },
                             "Whether deals of suits the spot cannot tell apart share one subtree.")
      .def("num_hands", [](const HoldemEndgame& g, int p) { check_player(p); return g.num_hands(p); }, py::arg("player"))
      .def("hands", [](const HoldemEndgame& g, int p) {
             check_player(p);
             py::array_t<int32_t> out({static_cast<py::ssize_t>(g.num_hands(p)), py::ssize_t{2}});
             int32_t* d = out.mutable_data();
             for (const auto& h : g.hands(p)) { *d++ = h.c1; *d++ = h.c2; }
             return out;
           }, py::arg("player"), "The player's hands, (H, 2) int32 card numbers, in the order of its value vectors.")
      .def("weights", [](const HoldemEndgame& g, int p) { check_player(p); return to_array_1d(g.weights(p)); }, py::arg("player"))
      .def_property_readonly("num_nodes", [](const HoldemEndgame& g) { return static_cast<int64_t>(g.nodes().size()); })
      .def_property_readonly("leaves", [](const HoldemEndgame& g) { return std::vector<int32_t>(g.leaves()); },
                             "The depth-limit leaves' node ids in node order (the rows of leaf values and reaches).")
      .def_property_readonly("pair_mass", &HoldemEndgame::pair_mass,
                             "Sum over pairs of hands that share no card of w0 * w1: values / pair_mass are chips.")
      .def("size", [](const HoldemEndgame& g) {
             const auto& s = g.size();
             py::dict d;
             d["decision_nodes"] = s.decision_nodes;
             d["chance_nodes"] = s.chance_nodes;
             d["terminal_nodes"] = s.terminal_nodes;
             d["infosets"] = s.infosets;
             d["river_boards"] = s.river_boards;
             d["isomorphic_deals"] = s.isomorphic_deals;
             d["leaf_nodes"] = s.leaf_nodes;
             d["storage_values"] = s.storage_values;
             d["tree_bytes"] = s.tree_bytes;
             d["solver_bytes"] = s.solver_bytes(4);
             // 16-bit codes and two float32 scales per node (HoldemSolver(compressed=True)).
             d["solver_bytes_compressed"] = s.solver_bytes(2) + static_cast<int64_t>(2 * sizeof(float) * g.nodes().size());
             return d;
           }, "The expanded tree's size and the bytes the solver's float32 regrets and strategies will take "
              "(solver_bytes_compressed: in 16 bits).")
      .def("node", [](const HoldemEndgame& g, int i) {
             check_node(g, i);
             const auto& n = g.node(i);
             py::dict d;
             d["kind"] = kind_name(n.kind);
             d["player"] = static_cast<int>(n.player);
             d["action"] = n.action;
             d["label"] = g.betting().labels.empty() ? std::string() : g.betting().labels[n.action];
             std::vector<int> children;
             for (int c = 0; c < n.num_children; ++c) children.push_back(n.first_child + c);
             d["children"] = children;
             d["parent"] = n.parent;
             d["board"] = g.board_at(i);
             d["invested"] = std::vector<double>{g.invested(i, 0), g.invested(i, 1)};
             // Suit isomorphism: the other cards this node's deal stands for (same rank).
             std::vector<int> isomorphic;
             const int dealt = n.dealt[1] >= 0 ? n.dealt[1] : n.dealt[0];
             for (int s = 0; s < 4; ++s) {
               if (g.isomorphic_suits(i) & (1u << s)) isomorphic.push_back(holdem::make_card(holdem::card_rank(dealt), s));
             }
             d["isomorphic"] = isomorphic;
             return d;
           }, py::arg("node"), "One node of the expanded tree: kind, player, betting-tree node and label, children, board, chips in, and "
         "the cards its deal stands for under suit isomorphism.")
      .def("terminal_values", [](const HoldemEndgame& g, int node, int player, const py::object& opp_reach, bool dense) {
             check_node(g, node);
             check_player(player);
             const auto& n = g.node(node);
             if (n.kind != BettingTree::kFold && n.kind != BettingTree::kShowdown) throw py::value_error("node " + std::to_string(node) + " is not terminal");
             std::vector<double> reach = to_double_vector(opp_reach, {g.num_hands(1 - player)}, "opp_reach");
             // Reach is a range weight in [0, 1] times probabilities. Anything else (NaN, infinities,
             // negatives, sums that overflow) would come back as values that look like numbers, so
             // it is refused.
             for (size_t h = 0; h < reach.size(); ++h) {
               if (!(reach[h] >= 0 && reach[h] <= 1)) {
                 throw py::value_error("opp_reach must lie in [0, 1], entry " + std::to_string(h) + " is " + std::to_string(reach[h]));
               }
             }
             // A dealt card's hands get no reach below it, as the solvers pass them.
             for (int8_t c : n.dealt) {
               if (c >= 0) for (int32_t h : g.hands_with_card(1 - player, c)) reach[h] = 0;
             }
             std::vector<double> out(static_cast<size_t>(g.num_hands(player)));
             std::vector<double> scratch(g.scratch_size());
             {
               py::gil_scoped_release release;
               if (dense) {
                 g.terminal_values_dense(node, player, reach.data(), out.data());
               } else {
                 g.terminal_values(node, player, reach.data(), out.data(), scratch.data());
               }
             }
             return to_array_1d(out);
           }, py::arg("node"), py::arg("player"), py::arg("opp_reach"), py::arg("dense") = false,
           "The player's values at a terminal node against the opponent's reach (float64, one per opponent hand): "
           "linear time, or the dense pairwise sum (the test oracle) with dense=True.");

  py::class_<HoldemSolver>(m, "HoldemSolver",
                           "A full-game solver on a HoldemEndgame (csrc/solvers/holdem_cfr.h): cfr, cfr+, lcfr, dcfr "
                           "or dcfr-pfs, float32 (or 16-bit) storage, threads over the first street's dealt cards.")
      .def(py::init([](std::shared_ptr<HoldemEndgame> game, const std::string& algorithm, int threads, bool compressed) {
             const auto& g = require(game, "game");
             (void)g;
             const auto a = holdem::parse_holdem_algorithm(algorithm);
             py::gil_scoped_release release;
             return std::make_unique<HoldemSolver>(game, a, threads, compressed);
           }),
           py::arg("game"), py::arg("algorithm") = "dcfr", py::arg("threads") = 1, py::arg("compressed") = false,
           "compressed=True keeps regrets and strategies in 16 bits with a float32 scale per node (half the memory).")
      .def_property_readonly("game", [](const HoldemSolver& s) { return std::const_pointer_cast<HoldemEndgame>(s.shared_game()); },
                             "The HoldemEndgame it solves (the same Python object it was built with).")
      .def_property_readonly("compressed", &HoldemSolver::compressed)
      .def_property_readonly("iterations", &HoldemSolver::iterations)
      .def_property_readonly("algorithm", [](const HoldemSolver& s) { return holdem::holdem_algorithm_name(s.algorithm()); })
      .def_property_readonly("threads", &HoldemSolver::threads)
      .def_property_readonly("storage_bytes", &HoldemSolver::storage_bytes)
      .def("iterate", [](HoldemSolver& s, int n) {
             if (n < 0) throw py::value_error("iterations must be >= 0, got " + std::to_string(n));
             run_in_chunks(n, 1, [&](long k) { s.iterate(static_cast<int>(k)); });
           }, py::arg("iterations"), "Runs that many iterations without the GIL (Ctrl-C stops between iterations).")
      .def("exploitability", [](HoldemSolver& s, bool through_locks) {
             py::gil_scoped_release release;
             return s.exploitability(through_locks);
           }, py::arg("through_locks") = false,
           "(best-response value of OOP + that of IP) / 2 against the average strategies, in chips (exact). Locked "
           "nodes stay locked in the best responses unless through_locks (then: the whole strategy's).")
      .def("best_response_values", [](HoldemSolver& s, bool through_locks) {
             py::gil_scoped_release release;
             return s.best_response_values(through_locks);
           }, py::arg("through_locks") = false)
      .def("set_leaf_values", [](HoldemSolver& s, int player, const py::object& values) {
             check_player(player);
             const auto leaves = static_cast<py::ssize_t>(s.game().leaves().size());
             auto a = require_float32_array(values, {leaves, s.game().num_hands(player)}, "leaf values");
             s.set_leaf_values(player, std::vector<float>(a.data(), a.data() + a.size()));
           }, py::arg("player"), py::arg("values"),
           "Depth-limited games: the player's values at every leaf, (leaves, hands) float32, in chips per unit of "
           "the opponent's normalised beliefs (a value net's output times the pot); the solver multiplies them by "
           "the opponent's reach mass at the leaf.")
      .def("iterate_player", [](HoldemSolver& s, int player) {
             check_player(player);
             py::gil_scoped_release release;
             s.iterate_player(player);
           }, py::arg("player"),
           "One half-iteration: player 0's starts an iteration, player 1's ends it (a search sets the leaf values "
           "before each).")
      .def("leaf_reaches", [](HoldemSolver& s, bool average) {
             std::array<std::vector<double>, 2> r;
             {
               py::gil_scoped_release release;
               r = s.leaf_reaches(average);
             }
             const auto leaves = static_cast<py::ssize_t>(s.game().leaves().size());
             py::tuple out(2);
             for (int p = 0; p < 2; ++p) {
               py::array_t<double> a({leaves, static_cast<py::ssize_t>(s.game().num_hands(p))});
               std::copy(r[p].begin(), r[p].end(), a.mutable_data());
               out[p] = a;
             }
             return out;
           }, py::arg("average") = false,
           "Each player's reach at every leaf, (leaves, hands) float64: its weights times its own current "
           "(average=True: average) strategy on the path; 0 on hands a dealt card blocks; no chance probability.")
      .def("best_response_hand_values", [](HoldemSolver& s) { return hand_values_tuple(s, true); }, "Per hand at the root, (oop, ip) float64 arrays over each player's hands: the counterfactual value "
              "(chips x the opponent's weights on compatible hands, expected over deals) of a best response to the "
              "other's average strategy; hands of weight 0 included.")
      .def("average_hand_values", [](HoldemSolver& s) { return hand_values_tuple(s, false); }, "As best_response_hand_values with both players on their average strategies.")
      .def("average_values", [](HoldemSolver& s) {
             py::gil_scoped_release release;
             return s.average_values();
           }, "Each player's expected chips when both play their average strategies.")
      .def("average_strategy", [](const HoldemSolver& s, int node) {
             check_node(s.game(), node);
             const auto& n = s.game().node(node);
             const auto sigma = s.average_strategy(node);
             return strategy_array(sigma, n.num_children, s.game().num_hands(n.player));
           }, py::arg("node"), "The average strategy at a decision node: (actions, hands of its actor) float32.")
      .def("current_strategy", [](const HoldemSolver& s, int node) {
             check_node(s.game(), node);
             const auto& n = s.game().node(node);
             const auto sigma = s.current_strategy(node);
             return strategy_array(sigma, n.num_children, s.game().num_hands(n.player));
           }, py::arg("node"), "The regret-matched strategy of the next iteration at a decision node.")
      .def("lock", [](HoldemSolver& s, int node, const py::object& strategy) {
             check_node(s.game(), node);
             const auto& n = s.game().node(node);
             if (n.kind != BettingTree::kDecision) throw py::value_error("node " + std::to_string(node) + " is not a decision: only decisions can be locked");
             auto a = require_float32_array(strategy, {n.num_children, s.game().num_hands(n.player)}, "strategy");
             s.lock(node, std::vector<float>(a.data(), a.data() + a.size()));
           }, py::arg("node"), py::arg("strategy"),
           "Node locking: the actor plays `strategy` ((actions, hands) float32, rows of each hand summing to 1) at "
           "this node from now on; best responses keep it, so exploitability measures the rest of the game.")
      .def("unlock", [](HoldemSolver& s, int node) { check_node(s.game(), node); s.unlock(node); }, py::arg("node"))
      .def("locked_nodes", &HoldemSolver::locked_nodes)
      .def("node_report", [](HoldemSolver& s, int node) {
             check_node(s.game(), node);
             HoldemSolver::NodeReport r;
             {
               py::gil_scoped_release release;
               r = s.node_report(node);
             }
             py::dict d;
             for (int p = 0; p < 2; ++p) {
               py::dict one;
               one["reach"] = to_array_1d(r.reach[p]);
               one["values"] = to_array_1d(r.values[p]);
               one["ev"] = to_array_1d(r.ev[p]);
               one["equity"] = to_array_1d(r.equity[p]);
               d[p == 0 ? "oop" : "ip"] = one;
             }
             return d;
           }, py::arg("node"),
           "Per-hand results at a node with both average strategies: for 'oop' and 'ip', float64 arrays over the "
           "player's hands: reach (weight x own strategy on the path), values (counterfactual), ev (chips expected "
           "from the start of the spot given the hand and the node; NaN where unreached) and equity (showdown share "
           "against the opponent's hands there over every run-out; NaN where unreached).");
}

}  // namespace rebel_bindings
