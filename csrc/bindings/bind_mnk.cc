// Python bindings: the m,n,k engine (board, exact solver, MCTS with batched evaluation,
// random-rollout MCTS). Long calls run without the GIL and stop on Ctrl-C.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "bindings/common.h"
#include "games/mnk_board.h"
#include "perfect_info/mcts.h"
#include "perfect_info/negamax.h"

namespace rebel_bindings {

using namespace rebel;

namespace {

mnk::Rules rules_of(int m, int n, int k) {
  mnk::Rules rules{m, n, k};
  rules.validate();
  return rules;
}

void check_same_rules(const mnk::Rules& have, const mnk::Rules& want, const char* what) {
  if (have.m != want.m || have.n != want.n || have.k != want.k) {
    throw py::value_error(std::string(what) + " is " + have.description() + ", expected " + want.description());
  }
}

int cell_index(const mnk::Board& board, const py::handle& cell) {
  if (py::isinstance<py::str>(cell)) {
    const std::string name = cell.cast<std::string>();
    const int c = board.rules().parse_cell(name);
    if (c < 0) throw py::value_error("'" + name + "' is not a cell of the " + board.rules().description() + " board");
    return c;
  }
  if (!py::isinstance<py::int_>(cell) || py::isinstance<py::bool_>(cell)) {
    throw py::type_error("a cell is an int (row * n + column) or a name such as 'b2'");
  }
  const long long c = cell.cast<long long>();
  if (c < 0 || c >= board.rules().cells()) {
    throw py::value_error("cell " + std::to_string(c) + " is off the board (0.." + std::to_string(board.rules().cells() - 1) + ")");
  }
  return static_cast<int>(c);
}

py::array_t<float> planes_array(const mnk::Board& board) {
  const auto& r = board.rules();
  py::array_t<float> out({static_cast<py::ssize_t>(mnk::kPlanes), static_cast<py::ssize_t>(r.m), static_cast<py::ssize_t>(r.n)});
  mnk::encode_planes(board, out.mutable_data());
  return out;
}

py::array_t<int32_t> int_array(const std::vector<int>& v) {
  py::array_t<int32_t> out(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

const char* outcome_name(mnk::Outcome o) {
  switch (o) {
    case mnk::Outcome::kWin0: return "win0";
    case mnk::Outcome::kWin1: return "win1";
    case mnk::Outcome::kDraw: return "draw";
    default: return "ongoing";
  }
}

}  // namespace

void bind_mnk(py::module_& m) {
  py::class_<mnk::Board>(m, "MnkBoard",
                         "An m,n,k board (m rows, n columns, k in a row wins); cells are row * n + column, "
                         "named like 'a1' (column letter, row number). Player 0 moves first.")
      .def(py::init([](int m_, int n_, int k_) { return mnk::Board(rules_of(m_, n_, k_)); }), py::arg("m") = 3,
           py::arg("n") = 3, py::arg("k") = 3)
      .def_property_readonly("m", [](const mnk::Board& b) { return b.rules().m; })
      .def_property_readonly("n", [](const mnk::Board& b) { return b.rules().n; })
      .def_property_readonly("k", [](const mnk::Board& b) { return b.rules().k; })
      .def_property_readonly("to_move", &mnk::Board::to_move)
      .def_property_readonly("moves_made", &mnk::Board::moves_made)
      .def_property_readonly("last_move", &mnk::Board::last_move)
      .def_property_readonly("history", &mnk::Board::history)
      .def_property_readonly("terminal", &mnk::Board::terminal)
      .def_property_readonly("outcome", [](const mnk::Board& b) { return outcome_name(b.outcome()); },
                             "'ongoing', 'win0', 'win1' or 'draw'")
      .def("result_for", [](const mnk::Board& b, int player) {
             if (player != 0 && player != 1) throw py::value_error("player must be 0 or 1");
             return b.result_for(player);
           }, py::arg("player"), "+1 / -1 / 0 for `player` (0 while the game goes on)")
      .def("legal", [](const mnk::Board& b, const py::handle& cell) {
             try {
               return b.legal(cell_index(b, cell));
             } catch (const py::value_error&) {
               return false;
             }
           }, py::arg("cell"))
      .def("legal_moves", [](const mnk::Board& b) {
             std::vector<int> out;
             b.legal_moves(&out);
             return out;
           })
      .def("play", [](mnk::Board& b, const py::handle& cell) { b.play(cell_index(b, cell)); }, py::arg("cell"),
           "Plays the mover's stone; ValueError for an occupied or off-board cell or a finished game.")
      .def("undo", &mnk::Board::undo)
      .def("wins_by", [](const mnk::Board& b, const py::handle& cell) {
             const int c = cell_index(b, cell);
             if (!b.legal(c)) throw py::value_error("cell " + b.rules().cell_name(c) + " is not a legal move");
             return b.wins_by(c);
           }, py::arg("cell"), "Whether the player to move would win by playing `cell`.")
      .def("cells", [](const mnk::Board& b) {
             py::array_t<int8_t> out({static_cast<py::ssize_t>(b.rules().m), static_cast<py::ssize_t>(b.rules().n)});
             std::copy(b.cells().begin(), b.cells().end(), out.mutable_data());
             return out;
           }, "(m, n) int8: 0 empty, 1 player 0's stone, 2 player 1's")
      .def("planes", &planes_array, "(4, m, n) float32 net input: mover's stones, opponent's, last move, "
                                    "ones when player 0 is to move")
      .def("cell_name", [](const mnk::Board& b, int cell) {
             if (cell < 0 || cell >= b.rules().cells()) throw py::value_error("cell " + std::to_string(cell) + " is off the board");
             return b.rules().cell_name(cell);
           }, py::arg("cell"))
      .def("parse_cell", [](const mnk::Board& b, const std::string& name) { return b.rules().parse_cell(name); },
           py::arg("name"), "The cell named `name` ('b2'), or -1")
      .def("copy", [](const mnk::Board& b) { return mnk::Board(b); })
      .def("__str__", &mnk::Board::to_string)
      .def("__repr__", [](const mnk::Board& b) {
        return "MnkBoard(" + b.rules().description() + ", moves=" + std::to_string(b.moves_made()) + ", " +
               outcome_name(b.outcome()) + ")";
      });

  m.def("mnk_symmetries", [](int m_, int n_) {
          const auto perms = mnk::symmetries(rules_of(m_, n_, 1));
          py::array_t<int32_t> out({static_cast<py::ssize_t>(perms.size()), static_cast<py::ssize_t>(m_ * n_)});
          auto* p = out.mutable_data();
          for (const auto& perm : perms) p = std::copy(perm.begin(), perm.end(), p);
          return out;
        }, py::arg("m"), py::arg("n"),
        "The board's symmetries as cell permutations, shape (S, m * n): out[s, cell] is where `cell` goes "
        "(S = 8 on a square board, 4 otherwise; s = 0 is the identity).");

  py::class_<mnk::ExactSolver, std::shared_ptr<mnk::ExactSolver>>(m, "MnkSolver",
      "Exact values of m,n,k positions (negamax, alpha-beta, transposition table); boards of at most 64 cells.")
      .def(py::init([](int m_, int n_, int k_, long long max_positions) {
             return std::make_shared<mnk::ExactSolver>(rules_of(m_, n_, k_), max_positions);
           }), py::arg("m") = 3, py::arg("n") = 3, py::arg("k") = 3, py::arg("max_positions") = 200'000'000LL)
      .def("value", [](mnk::ExactSolver& s, const mnk::Board& board) {
             int v = 0;
             run_cancellable([&](std::atomic<bool>* cancel) { v = s.value(board, cancel); });
             return v;
           }, py::arg("board"), "+1 / 0 / -1 for the player to move, with best play by both")
      .def("move_values", [](mnk::ExactSolver& s, const mnk::Board& board) {
             std::vector<int> v;
             run_cancellable([&](std::atomic<bool>* cancel) { v = s.move_values(board, cancel); });
             return int_array(v);
           }, py::arg("board"), "per cell: the mover's value after that move (-2: illegal)")
      .def_property_readonly("positions_searched", &mnk::ExactSolver::positions_searched)
      .def_property_readonly("table_size", &mnk::ExactSolver::table_size);

  py::class_<mnk::MctsBatch, std::shared_ptr<mnk::MctsBatch>>(m, "MctsBatch",
      "PUCT search over many m,n,k games at once; select() hands out one leaf per searching game for a "
      "batched net evaluation, evaluate() takes the net's priors and values back.")
      .def(py::init([](int m_, int n_, int k_, int num_games, int simulations, double c_puct, double dirichlet_alpha,
                       double dirichlet_fraction, bool reuse_tree, uint64_t seed) {
             mnk::MctsParams p;
             p.simulations = simulations;
             p.c_puct = c_puct;
             p.dirichlet_alpha = dirichlet_alpha;
             p.dirichlet_fraction = dirichlet_fraction;
             p.reuse_tree = reuse_tree;
             return std::make_shared<mnk::MctsBatch>(rules_of(m_, n_, k_), p, num_games, seed);
           }), py::arg("m"), py::arg("n"), py::arg("k"), py::arg("num_games"), py::arg("simulations") = 400,
           py::arg("c_puct") = 1.5, py::arg("dirichlet_alpha") = 0.3, py::arg("dirichlet_fraction") = 0.25,
           py::arg("reuse_tree") = true, py::arg("seed") = 0)
      .def_property_readonly("num_games", &mnk::MctsBatch::num_games)
      .def("reset", [](mnk::MctsBatch& b, int game, const mnk::Board& board) {
             if (game < 0 || game >= b.num_games()) throw py::index_error("game index out of range");
             check_same_rules(board.rules(), b.tree(0).board().rules(), "the board");
             b.tree(game).reset(board);
           }, py::arg("game"), py::arg("board"))
      .def("advance", [](mnk::MctsBatch& b, int game, const py::handle& cell) {
             if (game < 0 || game >= b.num_games()) throw py::index_error("game index out of range");
             b.tree(game).advance(cell_index(b.tree(game).board(), cell));
           }, py::arg("game"), py::arg("cell"), "Plays `cell` in `game`, keeping its subtree (tree reuse).")
      .def("board", [](const mnk::MctsBatch& b, int game) {
             if (game < 0 || game >= b.num_games()) throw py::index_error("game index out of range");
             return mnk::Board(b.tree(game).board());
           }, py::arg("game"))
      .def("begin", [](mnk::MctsBatch& b, const std::vector<int>& games, bool root_noise) { b.begin(games, root_noise); },
           py::arg("games"), py::arg("root_noise") = false)
      .def("select", [](mnk::MctsBatch& b) -> py::object {
             std::vector<int> games;
             std::vector<float> planes;
             bool more = false;
             {
               py::gil_scoped_release release;
               more = b.select(&games, &planes);
             }
             if (!more) return py::none();
             const auto& r = b.tree(0).board().rules();
             py::array_t<float> x({static_cast<py::ssize_t>(games.size()), static_cast<py::ssize_t>(mnk::kPlanes),
                                   static_cast<py::ssize_t>(r.m), static_cast<py::ssize_t>(r.n)});
             std::copy(planes.begin(), planes.end(), x.mutable_data());
             return py::make_tuple(int_array(games), x);
           }, "(games, planes) of the leaves to evaluate, or None once every search has run its simulations "
              "(games may be empty when only terminal leaves were met)")
      .def("evaluate", [](mnk::MctsBatch& b, const py::handle& priors, const py::handle& values) {
             const auto& r = b.tree(0).board().rules();
             const py::ssize_t count = b.awaiting();
             auto p = require_float32_array(priors, {count, static_cast<py::ssize_t>(r.cells())}, "priors");
             auto v = require_float32_array(values, {count}, "values");
             py::gil_scoped_release release;
             b.evaluate(p.data(), v.data());
           }, py::arg("priors"), py::arg("values"),
           "priors (count, m * n) float32 and values (count,) float32 (for the player to move) of the last "
           "select()'s leaves, in its order")
      .def("visit_counts", [](const mnk::MctsBatch& b, int game) {
             if (game < 0 || game >= b.num_games()) throw py::index_error("game index out of range");
             std::vector<int> counts(static_cast<size_t>(b.tree(game).board().rules().cells()));
             b.tree(game).root_visit_counts(counts.data());
             return int_array(counts);
           }, py::arg("game"))
      .def("root_value", [](const mnk::MctsBatch& b, int game) {
             if (game < 0 || game >= b.num_games()) throw py::index_error("game index out of range");
             return b.tree(game).root_value();
           }, py::arg("game"))
      .def("num_nodes", [](const mnk::MctsBatch& b, int game) {
             if (game < 0 || game >= b.num_games()) throw py::index_error("game index out of range");
             return b.tree(game).num_nodes();
           }, py::arg("game"));

  m.def("mnk_rollout_search", [](const mnk::Board& board, int playouts, uint64_t seed, double c_puct) {
          std::vector<int> counts;
          run_cancellable([&](std::atomic<bool>* cancel) { counts = mnk::rollout_search(board, playouts, seed, c_puct, cancel); });
          return int_array(counts);
        }, py::arg("board"), py::arg("playouts"), py::arg("seed") = 0, py::arg("c_puct") = 5.0,
        "Pure MCTS with random rollouts from `board`: the root's visit counts per cell after `playouts` simulations.");
}

}  // namespace rebel_bindings
