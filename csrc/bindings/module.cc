// Entry point of the rebel._core extension. Each bind_*.cc file registers one area.
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace rebel_bindings {
void bind_games(py::module_& m);
void bind_solvers(py::module_& m);
void bind_mlp(py::module_& m);
void bind_matrix(py::module_& m);
void bind_search(py::module_& m);
void bind_selfplay(py::module_& m);
void bind_mnk(py::module_& m);
void bind_holdem(py::module_& m);
void bind_holdem_endgame(py::module_& m);
}  // namespace rebel_bindings

PYBIND11_MODULE(_core, m) {
  m.doc() = "rebel C++ core: games, public trees, CFR/FP solvers, best response, value nets, search";
  rebel_bindings::bind_games(m);
  rebel_bindings::bind_solvers(m);
  rebel_bindings::bind_mlp(m);
  rebel_bindings::bind_matrix(m);
  rebel_bindings::bind_search(m);
  rebel_bindings::bind_selfplay(m);
  rebel_bindings::bind_mnk(m);
  rebel_bindings::bind_holdem(m);
  rebel_bindings::bind_holdem_endgame(m);
}
