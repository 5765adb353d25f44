// Python bindings: one step of self-play data generation (rebel._core.SelfPlayGenerator).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <memory>

#include "bindings/common.h"
#include "search/pbs.h"
#include "search/selfplay.h"

namespace rebel_bindings {

using namespace rebel;

namespace {

// The generator plus a cancel flag that Python sets (from any thread) to stop the steps
// running in worker threads; a cancelled step raises KeyboardInterrupt in its thread.
struct PySelfPlayGenerator {
  std::shared_ptr<SelfPlayGenerator> generator;
  std::shared_ptr<CancelFlag> cancel = std::make_shared<CancelFlag>(false);
};

py::array_t<float> float_matrix(const std::vector<float>& v, py::ssize_t rows, py::ssize_t cols) {
  py::array_t<float> out({rows, cols});
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

}  // namespace

void bind_selfplay(py::module_& m) {
  py::class_<SelfPlayStep>(m, "SelfPlayStep", "The result of one self-play step (see SelfPlayGenerator.step).")
      .def_readonly("sampled_iteration", &SelfPlayStep::sampled_iteration)
      .def_readonly("exploring_player", &SelfPlayStep::exploring_player)
      .def_readonly("hands", &SelfPlayStep::hands)
      .def_readonly("next_history", &SelfPlayStep::next_history)
      .def_readonly("next_terminal", &SelfPlayStep::next_terminal,
                    "Whether the episode ends: the walk reached a terminal, or a PBS no deal of hands fits "
                    "(next_no_deal).")
      .def_readonly("next_no_deal", &SelfPlayStep::next_no_deal,
                    "The walk ended at a PBS whose beliefs admit no deal of hands (each player's beliefs on "
                    "hands the other's rule out, reached through exploration): the episode ends there.")
      .def_readonly("net_seconds", &SelfPlayStep::net_seconds, "Wall time spent in the value net during the step.")
      .def_property_readonly("rows", [](const SelfPlayStep& s) {
        return float_matrix(s.rows, 2, static_cast<py::ssize_t>(s.rows.size() / 2));
      }, "float32 [2, query_size]: the root query row of player 0, then of player 1.")
      .def_property_readonly("targets", [](const SelfPlayStep& s) {
        return float_matrix(s.targets, 2, static_cast<py::ssize_t>(s.targets.size() / 2));
      }, "float32 [2, num_hands]: each player's linearly averaged root values.")
      .def_property_readonly("next_beliefs", [](const SelfPlayStep& s) -> py::object {
        if (s.next_terminal) return py::none();
        return py::make_tuple(to_array_1d(s.next_beliefs[0]), to_array_1d(s.next_beliefs[1]));
      }, "(beliefs0, beliefs1) of the next root, normalised; None when the episode ends (next_terminal).")
      .def_readonly("policy_count", &SelfPlayStep::policy_count, "Number of D_pi examples (collect_policy).")
      .def_property_readonly("policy_rows", [](const SelfPlayStep& s) {
        const py::ssize_t row = static_cast<py::ssize_t>(s.rows.size() / 2);
        return float_matrix(s.policy_rows, s.policy_count, row);
      }, "float32 [policy_count, query_size]: D_pi query rows (row[0] = row[1] = the acting player, beliefs\n"
         "under the final average policy).")
      .def_property_readonly("policy_targets", [](const SelfPlayStep& s) {
        const py::ssize_t H = static_cast<py::ssize_t>(s.targets.size() / 2);
        const py::ssize_t A = s.num_actions;
        py::array_t<float> out({static_cast<py::ssize_t>(s.policy_count), H, A});
        std::copy(s.policy_targets.begin(), s.policy_targets.end(), out.mutable_data());
        return out;
      }, "float32 [policy_count, num_hands, num_actions]: the average policy at each D_pi node (0 on illegal actions).")
      .def_property_readonly("policy_legal", [](const SelfPlayStep& s) {
        const py::ssize_t A = s.num_actions;
        py::array_t<bool> out({static_cast<py::ssize_t>(s.policy_count), A});
        bool* dst = out.mutable_data();
        for (size_t i = 0; i < s.policy_legal.size(); ++i) dst[i] = s.policy_legal[i] != 0;
        return out;
      }, "bool [policy_count, num_actions]: the actions legal at each D_pi node.")
      .def_property_readonly("policy_weights", [](const SelfPlayStep& s) {
        const py::ssize_t H = static_cast<py::ssize_t>(s.targets.size() / 2);
        return float_matrix(s.policy_weights, s.policy_count, H);
      }, "float32 [policy_count, num_hands]: the acting player's normalised beliefs at each D_pi node.")
      .def_property_readonly("iterate", [](const SelfPlayStep& s) -> py::object {
        if (s.iterate.empty()) return py::none();
        const py::ssize_t H = static_cast<py::ssize_t>(s.targets.size() / 2);
        return to_array_2d(s.iterate, static_cast<py::ssize_t>(s.iterate.size()) / H, H);
      }, "Iterate t's policy over the subgame tree (only with keep_iterate=True).");

  py::class_<PySelfPlayGenerator>(m, "SelfPlayGenerator", R"doc(
One step of ReBeL self-play (Algorithm 1): solve the depth-limited subgame at a PBS with
CFR-D (or FP) for `iterations` half-steps, sample the next root at a random iteration with
epsilon-exploration, and return both players' training examples.

SelfPlayGenerator(game, net=None, solver="lcfr", depth=2, iterations=1024, epsilon=0.25,
sampling="linear", full_depth=False, off_path="skip", policy_net=None, warm_iterations=0,
collect_policy=False, warm_prior=0.0, reuse_initial_solve=True). sampling: "linear" (weight i/2 + 1,
the paper's) or "uniform". full_depth=True solves the whole game below each root (no net)
and still walks `depth` actions: its targets are then exact (oracle) values. off_path: how
the solver treats nodes the current iterate never reaches (as SubgameSolver).
policy_net, warm_iterations K > 0: each solve is first warm-started from the policy net for K
updates (as TestTimeSearch; the sampled iteration's weights become K + i/2 + 1), with the
regret prior warm_prior (as TestTimeSearch).
collect_policy=True: each step also returns D_pi, the policy net's training data
(policy_rows, policy_targets, policy_legal, policy_weights; see csrc/search/selfplay.h).
reuse_initial_solve=True: steps at the initial public state (the empty history) reuse its
last solve while the beliefs and the nets' weights (value net, and the policy net of a warm
start) are unchanged; the steps are bit for bit
those of reuse_initial_solve=False (csrc/search/selfplay.h says when it applies).
Steps release the GIL and may run in several threads at once; cancel() stops them.)doc")
      .def(py::init([](const std::shared_ptr<Game>& game, std::shared_ptr<ValueNet> net, const std::string& solver,
                       int depth, int iterations, double epsilon, const std::string& sampling, bool full_depth,
                       const std::string& off_path, std::shared_ptr<PolicyNet> policy_net, int warm_iterations,
                       bool collect_policy, double warm_prior, bool reuse_initial_solve) {
             require(game, "game");
             SelfPlayParams params;
             params.solver = parse_solver(solver);
             params.solver.off_path = parse_off_path(off_path);
             params.solver.warm_prior = warm_prior;
             params.depth = depth;
             params.iterations = iterations;
             params.epsilon = epsilon;
             if (sampling == "linear") params.sampling = IterationSampling::kLinear;
             else if (sampling == "uniform") params.sampling = IterationSampling::kUniform;
             else throw py::value_error("sampling must be 'linear' or 'uniform', got '" + sampling + "'");
             params.full_depth_solve = full_depth;
             params.warm_iterations = warm_iterations;
             params.collect_policy = collect_policy;
             params.reuse_initial_solve = reuse_initial_solve;
             PySelfPlayGenerator g;
             g.generator = std::make_shared<SelfPlayGenerator>(game, params, full_depth ? nullptr : net, policy_net);
             return g;
           }),
           py::arg("game"), py::arg("net") = nullptr, py::arg("solver") = "lcfr", py::arg("depth") = 2,
           py::arg("iterations") = 1024, py::arg("epsilon") = 0.25, py::arg("sampling") = "linear",
           py::arg("full_depth") = false, py::arg("off_path") = off_path_name(SolverParams{}.off_path),
           py::arg("policy_net") = nullptr, py::arg("warm_iterations") = 0, py::arg("collect_policy") = false,
           py::arg("warm_prior") = 0.0, py::arg("reuse_initial_solve") = true)
      .def("step", [](const PySelfPlayGenerator& g, const History& history, const py::object& beliefs0,
                      const py::object& beliefs1, uint64_t seed, int iteration, bool keep_iterate) {
        const Game& game = g.generator->game();
        const py::ssize_t H = game.num_hands();
        Pbs pbs = make_pbs(game, history, {to_double_vector(beliefs0, {H}, "beliefs0"),
                                           to_double_vector(beliefs1, {H}, "beliefs1")});
        SelfPlayStep result;
        {
          py::gil_scoped_release release;
          try {
            result = g.generator->step(pbs.history, pbs.beliefs, seed, iteration, keep_iterate, g.cancel.get());
          } catch (const Cancelled&) {
            py::gil_scoped_acquire gil;
            PyErr_SetNone(PyExc_KeyboardInterrupt);
            throw py::error_already_set();
          }
        }
        return result;
      }, py::arg("history"), py::arg("beliefs0"), py::arg("beliefs1"), py::arg("seed"), py::arg("iteration") = -1,
         py::arg("keep_iterate") = false,
         "One self-play step from the PBS (history, beliefs0, beliefs1); all randomness from `seed`.\n"
         "iteration >= 0 fixes the sampled iteration (for tests). Raises KeyboardInterrupt once cancel() is called.")
      .def("sample_iteration", [](const PySelfPlayGenerator& g, double u) { return g.generator->sample_iteration(u); },
           py::arg("uniform01"))
      .def("subgame", [](const PySelfPlayGenerator& g, const History& history) {
        return std::const_pointer_cast<PublicTree>(g.generator->subgame(history));
      }, py::arg("history"), "The subgame tree solved at `history` (the layout of step().iterate).")
      .def("cancel", [](PySelfPlayGenerator& g) { g.cancel->store(true); }, "Stops running and future steps.")
      .def("reset_cancel", [](PySelfPlayGenerator& g) { g.cancel->store(false); })
      .def_property_readonly("cancelled", [](const PySelfPlayGenerator& g) { return g.cancel->load(); })
      .def_property_readonly("initial_solves_reused",
                             [](const PySelfPlayGenerator& g) { return g.generator->initial_solves_reused(); },
                             "Steps that reused the initial PBS's kept solve (reuse_initial_solve).")
      .def_property_readonly("initial_solves_computed",
                             [](const PySelfPlayGenerator& g) { return g.generator->initial_solves_computed(); },
                             "Solves of the initial PBS made for the cache (reuse_initial_solve).")
      .def_property_readonly("depth", [](const PySelfPlayGenerator& g) { return g.generator->params().depth; })
      .def_property_readonly("iterations", [](const PySelfPlayGenerator& g) { return g.generator->params().iterations; })
      .def_property_readonly("epsilon", [](const PySelfPlayGenerator& g) { return g.generator->params().epsilon; })
      .def_property_readonly("warm_iterations",
                             [](const PySelfPlayGenerator& g) { return g.generator->params().warm_iterations; })
      .def_property_readonly("collect_policy",
                             [](const PySelfPlayGenerator& g) { return g.generator->params().collect_policy; });
}

}  // namespace rebel_bindings
