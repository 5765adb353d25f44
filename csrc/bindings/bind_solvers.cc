// Python bindings: subgame / full-game solvers, best response and exploitability.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>

#include <cmath>

#include "bindings/common.h"
#include "core/best_response.h"
#include "core/tree_ops.h"
#include "core/policy_net.h"
#include "core/value_net.h"
#include "search/test_time_search.h"
#include "solvers/subgame_solver.h"

namespace rebel_bindings {

using namespace rebel;

namespace {

// The ReBeL paper's warm start counts the given policy as 15 iterations.
constexpr int kPaperWarmIterations = 15;

// An int (Python's or NumPy's, not a bool) in [0, 100000]: TypeError / ValueError otherwise.
int warm_iterations_from_py(const py::object& obj) {
  const std::string shown = py::str(py::repr(obj));
  if (py::isinstance<py::bool_>(obj) || !py::hasattr(obj, "__index__")) {
    throw py::type_error("warm_iterations must be an int, got " + shown);
  }
  const py::int_ k = py::reinterpret_steal<py::int_>(PyNumber_Index(obj.ptr()));
  if (!k) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(k.ptr(), &overflow);
  if (overflow < 0 || (overflow == 0 && v < 0)) throw py::value_error("warm_iterations must be >= 0, got " + shown);
  if (overflow > 0 || v > 100000) throw py::value_error("warm_iterations must be <= 100000, got " + shown);
  return static_cast<int>(v);
}

std::vector<double> policy_from_py(const py::handle& obj, const Game& game, const PublicTree& tree) {
  check_tree_game(game, tree);
  return to_double_vector(obj, {tree.size(), game.num_hands()}, "policy");
}

// The game behind a shared_ptr argument, checked for None and against the tree.
const Game& game_of_tree(const std::shared_ptr<Game>& game, const PublicTree& tree) {
  const Game& g = require(game, "game");
  check_tree_game(g, tree);
  return g;
}

void require_full_game_tree(const PublicTree& tree) {
  if (!tree.root_history().empty() || !tree.pseudo_leaves.empty()) {
    throw py::value_error("this needs the full game tree (build_tree(game) with no root and no depth limit)");
  }
}

}  // namespace

void bind_solvers(py::module_& m) {
  m.attr("OFF_PATH_MODES") = py::make_tuple("skip", "floor", "conditional");
  m.attr("DEFAULT_OFF_PATH") = off_path_name(SolverParams{}.off_path);

  py::class_<ValueNet, std::shared_ptr<ValueNet>>(m, "ValueNet", "Leaf value provider for depth-limited subgames.")
      .def_property_readonly("name", &ValueNet::name);
  py::class_<PolicyNet, std::shared_ptr<PolicyNet>>(m, "PolicyNet",
      "Warm-start policy provider (ReBeL's InitializePolicy): per hand of the acting player, a\n"
      "distribution over the legal actions at a PBS (csrc/core/policy_net.h).")
      .def_property_readonly("name", &PolicyNet::name);

  py::class_<SubgameSolver, std::shared_ptr<SubgameSolver>>(m, "SubgameSolver",
      "CFR-family or fictitious-play solver over a public tree from a public belief state.")
      .def(py::init([](const std::shared_ptr<Game>& game, const std::shared_ptr<PublicTree>& tree,
                       const py::object& beliefs0, const py::object& beliefs1, const std::string& solver,
                       std::shared_ptr<ValueNet> net, bool optimistic, double dcfr_alpha, double dcfr_beta,
                       double dcfr_gamma, const std::string& off_path, const py::object& warm_start,
                       const py::object& warm_iterations, double warm_prior) {
             SolverParams params = parse_solver(solver);
             params.off_path = parse_off_path(off_path);
             params.warm_prior = warm_prior;
             params.optimistic = params.optimistic || optimistic;
             params.dcfr_alpha = dcfr_alpha;
             params.dcfr_beta = dcfr_beta;
             params.dcfr_gamma = dcfr_gamma;
             if (!std::isfinite(dcfr_alpha) || !std::isfinite(dcfr_beta) || !std::isfinite(dcfr_gamma)) {
               throw py::value_error("dcfr_alpha, dcfr_beta and dcfr_gamma must be finite");
             }
             const int H = game_of_tree(game, require(tree, "tree")).num_hands();
             Beliefs b;
             b[0] = beliefs0.is_none() ? game->hand_prior() : to_double_vector(beliefs0, {H}, "beliefs0");
             b[1] = beliefs1.is_none() ? game->hand_prior() : to_double_vector(beliefs1, {H}, "beliefs1");
             const std::vector<char> possible = possible_hands(*game, tree->root_history());
             for (int p = 0; p < 2; ++p) {
               for (int h = 0; h < H; ++h) {
                 if (!possible[h] && b[p][h] > 0.0) {
                   throw py::value_error("beliefs" + std::to_string(p) + " put mass " + std::to_string(b[p][h]) +
                                         " on hand " + game->hand_name(h) +
                                         ", which the public cards dealt make impossible");
                 }
               }
             }
             if (warm_start.is_none() && !warm_iterations.is_none()) {
               throw py::value_error("warm_iterations needs a warm_start policy");
             }
             if (warm_start.is_none() && warm_prior != 0.0) throw py::value_error("warm_prior needs a warm_start policy");
             int iterations = kPaperWarmIterations;
             if (!warm_iterations.is_none()) iterations = warm_iterations_from_py(warm_iterations);
             std::vector<double> warm;
             if (!warm_start.is_none()) warm = to_double_vector(warm_start, {tree->size(), H}, "warm_start");
             auto made = std::make_shared<SubgameSolver>(game, tree, b, params, net);
             // std::invalid_argument (a bad policy, a kind or mode without warm start) -> ValueError.
             if (!warm_start.is_none()) made->warm_start(warm, iterations);
             return made;
           }),
           py::arg("game"), py::arg("tree"), py::arg("beliefs0") = py::none(), py::arg("beliefs1") = py::none(),
           py::arg("solver") = "lcfr", py::arg("net") = nullptr, py::arg("optimistic") = false,
           py::arg("dcfr_alpha") = 1.5, py::arg("dcfr_beta") = 0.0, py::arg("dcfr_gamma") = 2.0,
           py::arg("off_path") = off_path_name(SolverParams{}.off_path),
           py::arg("warm_start") = py::none(), py::arg("warm_iterations") = py::none(), py::arg("warm_prior") = 0.0,
           "off_path: what the CFR solvers do at nodes the current iterate reaches with probability 0:\n"
           "'skip' (no regret update there, pseudo-leaves the opponent does not reach are not queried),\n"
           "'floor' (the limit of the original ReBeL's 1e-80 floor on regrets and reaches) or 'conditional'\n"
           "(values conditional on reaching the node). Ignored by fp and lfp. See csrc/solvers/subgame_solver.h.\n"
           "warm_start: a policy of shape (tree.size, num_hands), float64, in current_policy()'s layout: start\n"
           "as if each player had made warm_iterations updates (default 15, the paper's) with both playing it\n"
           "(CFR: its regrets under the solver's weighting, the average from it, regret matching falling back\n"
           "to it; FP: the average from it; off_path 'skip' only). warm_prior lambda >= 0 (CFR kinds): each\n"
           "warm update also adds lambda * s * warm_start to the regrets (s: the hand's largest |value| at the\n"
           "node), so the iterates start at the policy. See csrc/solvers/warm_start.cc.")
      .def("step", [](SubgameSolver& s) {
        py::gil_scoped_release release;
        s.step();
      }, "One half-iteration (updates player num_steps % 2).")
      .def("run", [](SubgameSolver& s, long iterations, const py::object& callback) {
        if (iterations < 0) throw py::value_error("iterations must be >= 0, got " + std::to_string(iterations));
        const long chunk = std::max(1L, 2000000L / std::max(1L, static_cast<long>(s.tree().size()) * s.game().num_hands()));
        run_in_chunks(iterations, chunk, [&](long n) { s.run(static_cast<int>(n)); }, [&](long done) {
          if (!callback.is_none()) callback(done);
        });
      }, py::arg("iterations"), py::arg("callback") = py::none(),
         "Runs `iterations` half-iterations without the GIL; Ctrl-C interrupts; callback(done) after each chunk.")
      .def_property_readonly("num_steps", &SubgameSolver::num_steps,
                             "Half-iterations so far, the 2 x warm_iterations of a warm start included.")
      .def_property_readonly("warm_iterations", &SubgameSolver::warm_iterations,
                             "The updates per player a warm start counted (0: cold start).")
      .def_property_readonly("off_path", [](const SubgameSolver& s) { return off_path_name(s.params().off_path); })
      .def_property_readonly("leaf_queries", &SubgameSolver::leaf_queries,
                             "Pseudo-leaf rows sent to the value net so far.")
      .def_property_readonly("leaf_queries_skipped", &SubgameSolver::leaf_queries_skipped,
                             "Pseudo-leaf rows not sent because the opponent's reach mass there was 0.")
      .def_property_readonly("tree", [](const SubgameSolver& s) { return std::const_pointer_cast<PublicTree>(s.tree_ptr()); })
      .def("current_policy", [](const SubgameSolver& s) {
        return to_array_2d(s.current_policy(), s.tree().size(), s.game().num_hands());
      }, "The iterate played now (CFR: regret matching; FP: the average).")
      .def("average_policy", [](const SubgameSolver& s) {
        return to_array_2d(s.average_policy(), s.tree().size(), s.game().num_hands());
      })
      .def("played_policy", [](const SubgameSolver& s) {
        return to_array_2d(s.played_policy(), s.tree().size(), s.game().num_hands());
      }, "What a random-iteration stop (mode (b), the self-play walk) plays now: current_policy(), or for\n"
         "the '-play-avg' CFR-AVG solvers average_policy().")
      .def("root_values", [](const SubgameSolver& s, int p) {
        if (p != 0 && p != 1) throw py::value_error("player must be 0 or 1");
        return to_array_1d(s.root_values(p));
      }, py::arg("player"), "Averaged root values per hand (the ReBeL training target).")
      .def("last_root_values", [](const SubgameSolver& s, int p) {
        if (p != 0 && p != 1) throw py::value_error("player must be 0 or 1");
        return to_array_1d(s.last_root_values(p));
      }, py::arg("player"))
      .def("iterate_beliefs", [](const SubgameSolver& s, int node, int p) {
        if (p != 0 && p != 1) throw py::value_error("player must be 0 or 1");
        if (node < 0 || node >= s.tree().size()) throw py::value_error("node out of range");
        if (!s.tracks_orders()) throw py::value_error("iterate_beliefs needs a CFR solver with off_path 'floor' or 'conditional'");
        std::vector<double> out(s.game().num_hands());
        s.iterate_beliefs(node, p, out.data());
        return to_array_1d(out);
      }, py::arg("node"), py::arg("player"),
         "Beliefs of `player` at `node` under the current iterate, as a search would form the PBS there\n"
         "(leading-order reach normalised per the off-path mode; off_path 'floor' or 'conditional' only).")
      .def("root_beliefs", [](const SubgameSolver& s, int p) {
        if (p != 0 && p != 1) throw py::value_error("player must be 0 or 1");
        return to_array_1d(s.root_reach()[p]);
      }, py::arg("player"));

  m.def("exploitability", [](const std::shared_ptr<Game>& game, const PublicTree& tree, const py::object& policy) {
    require_full_game_tree(tree);
    auto p = policy_from_py(policy, require(game, "game"), tree);
    ExploitabilityReport r;
    {
      py::gil_scoped_release release;
      r = exploitability(*game, tree, p);
    }
    py::dict d;
    d["exploitability"] = r.exploitability;
    d["br_values"] = py::make_tuple(r.br_values[0], r.br_values[1]);
    d["game_value"] = r.value0;
    return d;
  }, py::arg("game"), py::arg("tree"), py::arg("policy"),
     "Exact exploitability (BR_0 + BR_1) / 2, the best-response values and player 0's expected value.");

  m.def("subgame_exploitability", [](const std::shared_ptr<Game>& game, const PublicTree& tree, const py::object& policy,
                                     const py::object& reach0, const py::object& reach1) {
    const Game& g = game_of_tree(game, tree);
    if (!tree.pseudo_leaves.empty()) throw py::value_error("subgame_exploitability needs a tree without depth limit");
    auto p = policy_from_py(policy, g, tree);
    std::array<std::vector<double>, 2> reach{to_double_vector(reach0, {g.num_hands()}, "reach0"),
                                             to_double_vector(reach1, {g.num_hands()}, "reach1")};
    ExploitabilityReport r;
    {
      py::gil_scoped_release release;
      r = exploitability_from(g, tree, p, reach);
    }
    py::dict d;
    d["exploitability"] = r.exploitability;
    d["br_values"] = py::make_tuple(r.br_values[0], r.br_values[1]);
    d["game_value"] = r.value0;
    return d;
  }, py::arg("game"), py::arg("tree"), py::arg("policy"), py::arg("reach0"), py::arg("reach1"),
     "Exploitability of a policy on a tree played to the end from any root, given both players' reaches there\n"
     "(e.g. the prior times a dealt board's chance factors); conditional on reaching the root (divided by the\n"
     "root's joint mass sum r0(h) r1(h') w(h, h')).");

  m.def("evaluate_mixture_sum", [](const std::shared_ptr<Game>& game, const PublicTree& tree, const py::object& sum) {
    const Game& g = require(game, "game");
    require_full_game_tree(tree);
    std::vector<double> s = to_double_vector(sum, {tree.size(), g.num_hands()}, "sum");
    MixtureEvaluation e;
    {
      py::gil_scoped_release release;
      e = evaluate_mixture_sum(g, tree, s);
    }
    py::dict d;
    d["exploitability"] = e.exploitability;
    d["br_values"] = py::make_tuple(e.br_values[0], e.br_values[1]);
    d["average_policy"] = to_array_2d(e.policy, tree.size(), g.num_hands());
    return d;
  }, py::arg("game"), py::arg("tree"), py::arg("sum"),
     "The average of the policies whose reach-weighted sum is `sum` (TestTimeSearch.sampled_sum, or sums of\n"
     "consecutive ranges) and its exact exploitability.");

  m.def("best_response", [](const std::shared_ptr<Game>& game, const PublicTree& tree, const py::object& policy, int player) {
    require_full_game_tree(tree);
    if (player != 0 && player != 1) throw py::value_error("player must be 0 or 1");
    auto p = policy_from_py(policy, require(game, "game"), tree);
    std::vector<double> hand_values;
    std::vector<int> br_child;
    const double value = best_response_value(*game, tree, p, player, &hand_values, &br_child);
    // The best response as a policy in the tree layout (only `player`'s nodes are set).
    const int H = game->num_hands();
    std::vector<double> br(static_cast<size_t>(tree.size()) * H, 0.0);
    for (int n : tree.decision_nodes) {
      if (tree.player[n] != player) continue;
      for (int h = 0; h < H; ++h) br[static_cast<size_t>(br_child[static_cast<size_t>(n) * H + h]) * H + h] = 1.0;
    }
    return py::make_tuple(value, to_array_1d(hand_values), to_array_2d(br, tree.size(), H));
  }, py::arg("game"), py::arg("tree"), py::arg("policy"), py::arg("player"),
     "(value, per-hand values, best-response policy) of `player` against `policy`.");

  m.def("expected_value", [](const std::shared_ptr<Game>& game, const PublicTree& tree, const py::object& policy, int player) {
    require_full_game_tree(tree);
    if (player != 0 && player != 1) throw py::value_error("player must be 0 or 1");
    const Game& g = require(game, "game");
    return expected_value(g, tree, policy_from_py(policy, g, tree), player);
  }, py::arg("game"), py::arg("tree"), py::arg("policy"), py::arg("player") = 0);

  m.def("validate_policy", [](const std::shared_ptr<Game>& game, const PublicTree& tree, const py::object& policy) {
    const Game& g = require(game, "game");
    validate_policy(tree, g.num_hands(), policy_from_py(policy, g, tree));
  }, py::arg("game"), py::arg("tree"), py::arg("policy"));
}

}  // namespace rebel_bindings
