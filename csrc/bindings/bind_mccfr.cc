// Python bindings: chance-sampling MCCFR on a full public game tree.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>

#include "bindings/common.h"
#include "solvers/mccfr.h"

namespace rebel_bindings {

using namespace rebel;

void bind_mccfr(py::module_& m) {
  py::class_<MccfrSolver, std::shared_ptr<MccfrSolver>>(m, "MccfrSolver",
      R"doc(Chance-sampling MCCFR (Lanctot et al. 2009) on the full game tree.

Each iteration samples one deal of both hands (respecting card removal) and runs CFR over
all public actions of both players for it. Deterministic for a given seed. Policies use the
tree layout [num_nodes, num_hands], so rebel.exploitability(game, tree, policy) applies.)doc")
      .def(py::init([](const std::shared_ptr<Game>& game, const std::shared_ptr<PublicTree>& tree,
                       const py::int_& seed) {
             require(game, "game");
             require(tree, "tree");
             if (seed < py::int_(0)) throw py::value_error("seed must be >= 0");
             return std::make_shared<MccfrSolver>(game, tree, seed.cast<uint64_t>());
           }),
           py::arg("game"), py::arg("tree"), py::arg("seed") = 0,
           "tree must be build_tree(game): rooted at the game's start, no depth limit.")
      .def("run", [](MccfrSolver& s, long iterations, const py::object& callback) {
        if (iterations < 0) throw py::value_error("iterations must be >= 0, got " + std::to_string(iterations));
        const long chunk = std::max(1L, 2000000L / std::max(1L, static_cast<long>(s.tree().size())));
        run_in_chunks(iterations, chunk, [&](long n) { s.run(n); }, [&](long done) {
          if (!callback.is_none()) callback(done);
        });
      }, py::arg("iterations"), py::arg("callback") = py::none(),
         "Runs `iterations` sampled deals without the GIL; Ctrl-C interrupts; callback(done) after each chunk.")
      .def_property_readonly("iterations", &MccfrSolver::iterations)
      .def_property_readonly("seed", &MccfrSolver::seed)
      .def("average_policy", [](const MccfrSolver& s) {
        return to_array_2d(s.average_policy(), s.tree().size(), s.game().num_hands());
      }, "Average strategy in the tree layout; unreached information sets are uniform.")
      .def("current_policy", [](const MccfrSolver& s) {
        return to_array_2d(s.current_policy(), s.tree().size(), s.game().num_hands());
      }, "Regret-matching strategy on the current regrets, in the tree layout.");
}

}  // namespace rebel_bindings
