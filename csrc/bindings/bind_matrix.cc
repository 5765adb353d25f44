// Python bindings of the sampling / normal-form solver area: regret matching on matrix
// games here, chance-sampling MCCFR in bind_mccfr.cc (registered from bind_matrix so that
// module.cc keeps one entry point per area).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/common.h"
#include "solvers/matrix_game.h"

namespace rebel_bindings {

using namespace rebel;

void bind_mccfr(py::module_& m);

namespace {

// Strict: a float64 array (other dtypes -> TypeError) or a nested sequence of numbers.
MatrixGame matrix_from_py(const py::handle& payoff) {
  if (payoff.is_none()) throw py::type_error("payoff must be a 2-D numpy float64 array, got None");
  py::array a;
  if (py::isinstance<py::array>(payoff)) {
    a = py::reinterpret_borrow<py::array>(payoff);
  } else {
    try {
      a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(payoff);
    } catch (...) {
    }
    if (!a) throw py::type_error("payoff must be a 2-D numpy float64 array or a nested sequence of numbers");
  }
  auto values = to_double_vector(a, {-1, -1}, "payoff");
  return MatrixGame(static_cast<int>(a.shape(0)), static_cast<int>(a.shape(1)), std::move(values));
}

py::array_t<double> matrix_to_py(const MatrixGame& g) {
  return to_array_2d(g.payoff, g.rows, g.cols);
}

}  // namespace

void bind_matrix(py::module_& m) {
  m.def("solve_matrix_game", [](const py::object& payoff, long iterations, const std::string& algorithm,
                                bool linear_avg, bool alternating) {
    if (iterations < 0) throw py::value_error("iterations must be >= 0, got " + std::to_string(iterations));
    MatrixSolverParams params;
    params.rule = parse_regret_rule(algorithm);
    params.linear_avg = linear_avg;
    params.alternating = alternating;
    MatrixRegretSolver solver(matrix_from_py(payoff), params);
    const long chunk = std::max(1L, 4000000L / (static_cast<long>(solver.game().rows) * solver.game().cols));
    run_in_chunks(iterations, chunk, [&](long n) { solver.run(n); });
    const auto x = solver.average_strategy(0), y = solver.average_strategy(1);
    const MatrixEvaluation e = evaluate(solver.game(), x, y);
    py::dict out;
    out["row_strategy"] = to_array_1d(x);
    out["col_strategy"] = to_array_1d(y);
    out["value"] = e.value;
    out["exploitability"] = e.exploitability;
    out["br_values"] = py::make_tuple(e.br_values[0], e.br_values[1]);
    return out;
  }, py::arg("payoff"), py::arg("iterations"), py::arg("algorithm") = "rm", py::arg("linear_avg") = false,
     py::arg("alternating") = false,
     R"doc(Regret matching on a zero-sum matrix game (payoff: float64 [rows, cols], the row player's payoff).

algorithm: 'rm' or 'rm+'; linear_avg weights iteration t by t in the average; alternating
lets the column player respond to the row player's updated strategy. Runs without the GIL
(Ctrl-C interrupts). Returns a dict with the average strategies row_strategy and
col_strategy, value = x^T A y, br_values = (max_i (A y)_i, max_j (-x^T A)_j) and
exploitability = sum(br_values) / 2 = NashConv / 2.)doc");

  m.def("evaluate_matrix_strategies", [](const py::object& payoff, const py::object& row, const py::object& col) {
    const MatrixGame g = matrix_from_py(payoff);
    const MatrixEvaluation e = evaluate(g, to_double_vector(row, {g.rows}, "row_strategy"),
                                        to_double_vector(col, {g.cols}, "col_strategy"));
    py::dict out;
    out["value"] = e.value;
    out["exploitability"] = e.exploitability;
    out["br_values"] = py::make_tuple(e.br_values[0], e.br_values[1]);
    return out;
  }, py::arg("payoff"), py::arg("row_strategy"), py::arg("col_strategy"),
     "Value, best-response values and exploitability (NashConv / 2) of a strategy pair.");

  m.def("matrix_game", [](const std::string& name) { return matrix_to_py(make_matrix_game(name)); },
        py::arg("name"), "Payoff matrix of a built-in game: 'rps' or 'modified_rps' (rows/cols: rock, paper, scissors).");
  m.def("list_matrix_games", &matrix_game_names);

  bind_mccfr(m);
}

}  // namespace rebel_bindings
