// Python bindings: games, the registry and public trees.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>
#include <memory>
#include <optional>
#include <utility>

#include "bindings/common.h"
#include "core/registry.h"
#include "core/tree.h"

namespace rebel_bindings {

using namespace rebel;

namespace {

template <class T>
py::array_t<T> vec_array(const std::vector<T>& v) {
  py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

GameParams params_from_dict(const py::dict& d) {
  GameParams out;
  for (auto item : d) {
    const auto key = py::str(item.first).cast<std::string>();
    if (!py::isinstance<py::int_>(item.second) || py::isinstance<py::bool_>(item.second)) {
      throw py::type_error("game parameter '" + key + "' must be an int, got " +
                           std::string(py::str(py::type::of(item.second).attr("__name__"))));
    }
    int overflow = 0;  // Python ints are unbounded
    const long long value = PyLong_AsLongLongAndOverflow(item.second.ptr(), &overflow);
    if (overflow != 0 || value < INT_MIN || value > INT_MAX) {
      throw py::value_error("game parameter '" + key + "' = " + std::string(py::str(item.second)) + " is out of range");
    }
    out.emplace_back(key, static_cast<int>(value));
  }
  return out;
}

void check_history(const Game& g, const History& h) {
  History prefix;
  std::vector<Action> legal;
  for (Action a : h) {
    if (g.is_terminal(prefix)) throw py::value_error("history continues after a terminal state");
    g.legal_actions(prefix, &legal);
    if (std::find(legal.begin(), legal.end(), a) == legal.end()) {
      throw py::value_error("action " + std::to_string(a) + " is not legal after " + std::to_string(prefix.size()) + " actions");
    }
    prefix.push_back(a);
  }
}

}  // namespace

void bind_games(py::module_& m) {
  py::class_<Game, std::shared_ptr<Game>>(m, "Game", "A two-player zero-sum game with private hands and public actions.")
      .def_property_readonly("name", &Game::name)
      .def_property_readonly("params", [](const Game& g) {
        py::dict d;
        for (const auto& [k, v] : g.params()) d[py::str(k)] = v;
        return d;
      })
      .def_property_readonly("num_hands", &Game::num_hands)
      .def_property_readonly("num_actions", &Game::num_actions)
      .def_property_readonly("feature_size", &Game::feature_size)
      .def_property_readonly("query_size", [](const Game& g) { return query_size(g); })
      .def_property_readonly("hand_prior", [](const Game& g) { return vec_array(g.hand_prior()); })
      .def_property_readonly("hands_independent", &Game::hands_independent)
      .def_property_readonly("has_public_chance", &Game::has_public_chance,
                             "True when some history is a public chance node (player_to_act gives 2 there).")
      .def_property_readonly("perfect_information",
                             [](const Game& g) { return g.num_hands() == 1 && g.features_identify_state(); },
                             "One hand per player and public features that identify the position (evaluate_perfect_info applies).")
      .def_property_readonly("stake_feature",
                             [](const Game& g) -> std::optional<std::pair<int, double>> {
                               if (g.stake_feature() < 0) return std::nullopt;
                               return std::make_pair(g.stake_feature(), g.stake_feature_scale());
                             },
                             "(f, scale): public feature f times scale is the stake (poker: the pot per player) "
                             "in value units, for stake-relative value nets; None when the game has none.")
      .def("description", &Game::description)
      .def("is_terminal", [](const Game& g, const History& h) { check_history(g, h); return g.is_terminal(h); })
      .def("player_to_act", [](const Game& g, const History& h) {
        check_history(g, h);
        if (g.is_terminal(h)) throw py::value_error("no player acts at a terminal history");
        return g.player_to_act(h);
      })
      .def("legal_actions", [](const Game& g, const History& h) {
        check_history(g, h);
        std::vector<Action> out;
        if (!g.is_terminal(h)) g.legal_actions(h, &out);
        return out;
      })
      .def("public_features", [](const Game& g, const History& h) {
        check_history(g, h);
        py::array_t<float> out(g.feature_size());
        g.public_features(h, out.mutable_data());
        return out;
      })
      .def("terminal_values", [](const Game& g, const History& h, int player, const py::object& opp_reach) {
        check_history(g, h);
        if (!g.is_terminal(h)) throw py::value_error("terminal_values needs a terminal history");
        if (player != 0 && player != 1) throw py::value_error("player must be 0 or 1");
        auto r = to_double_vector(opp_reach, {g.num_hands()}, "opp_reach");
        for (double x : r) {  // reach probabilities (NaN fails the test too)
          if (!(x >= 0.0 && x <= 1.0)) throw py::value_error("opp_reach entries must lie in [0, 1]");
        }
        std::vector<double> out(g.num_hands());
        g.terminal_values(h, player, r.data(), out.data());
        return to_array_1d(out);
      }, py::arg("history"), py::arg("player"), py::arg("opp_reach"))
      .def("action_name", [](const Game& g, int a) {
        if (a < 0 || a >= g.num_actions()) throw py::value_error("action id out of range");
        return g.action_name(a);
      })
      .def("hand_pair_weight", [](const Game& g, int h, int o) {
        if (h < 0 || h >= g.num_hands() || o < 0 || o >= g.num_hands()) throw py::value_error("hand id out of range");
        return g.hand_pair_weight(h, o);
      }, py::arg("hand"), py::arg("opp_hand"),
         "Weight of the hand pair in the deal (0: impossible together, as two equal Kuhn cards; 1 for independent hands).\n"
         "Chance deals (h, o) with probability prior[h] * prior[o] * weight; terminal_values include the weight.")
      .def("chance_factors", [](const Game& g, const History& h, int outcome) {
        check_history(g, h);
        if (g.is_terminal(h) || g.player_to_act(h) != kChancePlayer) {
          throw py::value_error("chance_factors needs a chance node");
        }
        std::vector<Action> legal;
        g.legal_actions(h, &legal);
        if (std::find(legal.begin(), legal.end(), outcome) == legal.end()) {
          throw py::value_error("outcome " + std::to_string(outcome) + " is not an outcome of this chance node");
        }
        std::vector<double> out(g.num_hands());
        g.chance_factors(h, outcome, out.data());
        return to_array_1d(out);
      }, py::arg("history"), py::arg("outcome"),
         "f_b(h) for every hand at the chance node `history` and its outcome b: P(b | h, h') = f_b(h) f_b(h').")
      .def("hand_name", [](const Game& g, int h) {
        if (h < 0 || h >= g.num_hands()) throw py::value_error("hand id out of range");
        return g.hand_name(h);
      })
      .def("count_tree_nodes", [](const Game& g, const History& root, int max_depth) {
        check_history(g, root);
        return g.count_tree_nodes(root, max_depth, 1e18);
      }, py::arg("root") = History{}, py::arg("max_depth") = -1)
      .def("__repr__", [](const Game& g) { return "<rebel.Game " + g.description() + ">"; });

  m.def("make_game", [](const std::string& name, const py::dict& params) -> std::shared_ptr<Game> {
    auto g = make_game(name, params_from_dict(params));
    return std::const_pointer_cast<Game>(g);
  }, py::arg("name"), py::arg("params") = py::dict(), "Creates a game by name, e.g. make_game('liars_dice', {'num_dice': 1, 'num_faces': 4}).");

  m.def("list_games", []() {
    py::list out;
    for (const auto& name : GameRegistry::instance().names()) {
      const auto& spec = GameRegistry::instance().spec(name);
      py::dict defaults;
      for (const auto& [k, v] : spec.defaults) defaults[py::str(k)] = v;
      py::dict d;
      d["name"] = name;
      d["summary"] = spec.summary;
      d["params"] = defaults;
      out.append(d);
    }
    return out;
  }, "Registered games with their parameters and defaults.");

  py::enum_<NodeKind>(m, "NodeKind")
      .value("DECISION", NodeKind::kDecision)
      .value("TERMINAL", NodeKind::kTerminal)
      .value("PSEUDO_LEAF", NodeKind::kPseudoLeaf)
      .value("CHANCE", NodeKind::kChance);
  m.attr("CHANCE_PLAYER") = kChancePlayer;

  py::class_<PublicTree, std::shared_ptr<PublicTree>>(m, "PublicTree",
      "Public tree in flat arrays, breadth-first; policies are [num_nodes, num_hands] indexed by child node.")
      .def_property_readonly("size", &PublicTree::size)
      .def("__len__", &PublicTree::size)
      .def_property_readonly("parent", [](const PublicTree& t) { return vec_array(t.parent); })
      .def_property_readonly("first_child", [](const PublicTree& t) { return vec_array(t.first_child); })
      .def_property_readonly("num_children", [](const PublicTree& t) { return vec_array(t.num_children); })
      .def_property_readonly("action", [](const PublicTree& t) { return vec_array(t.action); })
      .def_property_readonly("depth", [](const PublicTree& t) { return vec_array(t.depth); })
      .def_property_readonly("player", [](const PublicTree& t) { return vec_array(t.player); })
      .def_property_readonly("kind", [](const PublicTree& t) {
        std::vector<int> k;
        for (NodeKind kind : t.kind) k.push_back(static_cast<int>(kind));
        return vec_array(k);
      })
      .def_property_readonly("decision_nodes", [](const PublicTree& t) { return vec_array(t.decision_nodes); })
      .def_property_readonly("chance_nodes", [](const PublicTree& t) { return vec_array(t.chance_nodes); })
      .def_property_readonly("internal_nodes", [](const PublicTree& t) { return vec_array(t.internal_nodes); },
                             "Decision and chance nodes, breadth-first.")
      .def("chance_factors", [](const PublicTree& t, int n) {
        if (n < 0 || n >= t.size()) throw py::index_error("node id out of range");
        const double* f = t.chance_factors_at(n);
        if (!f) throw py::value_error("node " + std::to_string(n) + " is not a chance node");
        std::vector<double> out(f, f + static_cast<size_t>(t.num_children[n]) * t.num_hands);
        return to_array_2d(out, t.num_children[n], t.num_hands);
      }, py::arg("node"), "Chance factors f_b(h) of a chance node's children: [num_children, num_hands].")
      .def_property_readonly("terminal_nodes", [](const PublicTree& t) { return vec_array(t.terminal_nodes); })
      .def_property_readonly("pseudo_leaves", [](const PublicTree& t) { return vec_array(t.pseudo_leaves); })
      .def("history", [](const PublicTree& t, int n) {
        if (n < 0 || n >= t.size()) throw py::index_error("node id out of range");
        return t.history[n];
      })
      .def("find", [](const PublicTree& t, const History& h) { return find_node(t, h); },
           "Node id of a history relative to the root, or -1.")
      .def_property_readonly("game", [](const PublicTree& t) { return t.game; },
                             "Description of the game the tree was built for (e.g. 'kuhn()').");

  m.def("build_tree", [](const std::shared_ptr<Game>& game, const History& root, int max_depth,
                         const py::object& chance_leaves_arg) {
    check_history(require(game, "game"), root);
    // False / True (the dealt outcomes are leaves) or a name: "none", "after_deal", "at_deal".
    // None (the default) is what the CLI does: a depth-limited subgame ends after a deal, the
    // whole game (max_depth -1) has no leaves at its deals.
    ChanceLeaves chance_leaves = max_depth == -1 ? ChanceLeaves::kNone : ChanceLeaves::kAfterDeal;
    if (py::isinstance<py::bool_>(chance_leaves_arg)) {
      chance_leaves = chance_leaves_arg.cast<bool>() ? ChanceLeaves::kAfterDeal : ChanceLeaves::kNone;
    } else if (py::isinstance<py::str>(chance_leaves_arg)) {
      chance_leaves = parse_chance_leaves(chance_leaves_arg.cast<std::string>());  // ValueError if unknown
    } else if (!chance_leaves_arg.is_none()) {
      throw py::type_error("chance_leaves must be None, a bool or one of 'none', 'after_deal', 'at_deal'");
    }
    if (max_depth == 0 || max_depth < -1) throw py::value_error("max_depth must be >= 1, or -1 for no limit; got " + std::to_string(max_depth));
    std::shared_ptr<PublicTree> t;
    {
      py::gil_scoped_release release;
      t = std::make_shared<PublicTree>(build_tree(*game, root, max_depth, chance_leaves));
    }
    return t;
  }, py::arg("game"), py::arg("root") = History{}, py::arg("max_depth") = -1, py::arg("chance_leaves") = py::none(),
     "Public tree below `root` (a history of event ids) down to max_depth events (-1: unlimited).\n"
     "chance_leaves True or 'after_deal': every non-terminal outcome of a public chance node below the\n"
     "root is a pseudo-leaf (and a deal at max_depth is expanded); 'at_deal': every chance node below the\n"
     "root is one; False or 'none': deals are events like any other. None (the default): 'after_deal'\n"
     "for a depth-limited subgame, as `rebel eval` and self-play build them; 'none' for the whole game.");

  m.def("uniform_policy", [](const std::shared_ptr<Game>& game, const PublicTree& tree) {
    check_tree_game(require(game, "game"), tree);
    return to_array_2d(uniform_policy(*game, tree), tree.size(), game->num_hands());
  });
}

}  // namespace rebel_bindings
