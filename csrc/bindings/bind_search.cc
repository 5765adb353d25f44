// Python bindings: value nets (zero, oracle, Python-callable), test-time search and its
// exact evaluation.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>

#include "bindings/common.h"
#include "core/tree_ops.h"
#include "nets/policy_nets.h"
#include "nets/reference_nets.h"
#include "search/pbs.h"
#include "search/perfect_info.h"
#include "search/policy_start.h"
#include "search/test_time_search.h"

namespace rebel_bindings {

using namespace rebel;

namespace {

// Calls any Python callable (a function or a torch module) with a float32 array of query
// rows [B, query_size] and expects [B, num_hands] values back. The GIL is held only
// during the call, so solver threads run freely otherwise.
class PythonValueNet final : public ValueNet {
 public:
  PythonValueNet(py::object fn, int num_hands, std::string label)
      : fn_(std::move(fn)), num_hands_(num_hands), label_(std::move(label)) {}
  ~PythonValueNet() override {
    py::gil_scoped_acquire gil;
    fn_ = py::object();
  }

  void compute_values(const LeafQueryBatch& batch, double* out) override {
    py::gil_scoped_acquire gil;
    py::array_t<float> rows({static_cast<py::ssize_t>(batch.size), static_cast<py::ssize_t>(batch.row_size)});
    std::copy(batch.rows, batch.rows + static_cast<size_t>(batch.size) * batch.row_size, rows.mutable_data());
    py::object result = fn_(rows);
    if (py::hasattr(result, "detach")) result = result.attr("detach")().attr("cpu")().attr("numpy")();  // torch tensors
    py::array arr = py::array::ensure(result);
    if (!arr) throw std::invalid_argument("python value net returned " + std::string(py::str(py::type::of(result))) + ", expected an array");
    if (arr.ndim() != 2 || arr.shape(0) != batch.size || arr.shape(1) != num_hands_) {
      throw std::invalid_argument("python value net returned shape " + shape_string(arr) + ", expected (" +
                                  std::to_string(batch.size) + ", " + std::to_string(num_hands_) + ")");
    }
    const char kind = arr.dtype().kind();
    if (kind != 'f' && kind != 'i' && kind != 'u') {
      throw std::invalid_argument("python value net returned dtype " + std::string(py::str(arr.dtype())) +
                                  ", expected real numbers (float or int)");
    }
    auto values = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(arr);
    if (!values) throw std::invalid_argument("python value net returned values that do not convert to float64");
    const double* v = values.data();
    for (py::ssize_t i = 0; i < values.size(); ++i) {
      if (!std::isfinite(v[i])) throw std::invalid_argument("python value net returned a non-finite value");
      out[i] = v[i];
    }
  }
  std::string name() const override { return label_; }

 private:
  py::object fn_;
  int num_hands_;
  std::string label_;
};

SolverParams solver_params(const std::string& solver, const std::string& off_path) {
  SolverParams p = parse_solver(solver);
  p.off_path = parse_off_path(off_path);
  return p;
}

const std::string kDefaultOffPath = off_path_name(SolverParams{}.off_path);

SearchParams search_params(const std::string& solver, const std::string& off_path, int depth, int iterations,
                           int warm_iterations = 0, double warm_prior = 0.0,
                           const std::string& chance_leaves = "after_deal") {
  SearchParams params;
  params.chance_leaves = parse_chance_leaves(chance_leaves);
  if (params.chance_leaves == ChanceLeaves::kNone) {
    throw py::value_error("chance_leaves must be 'after_deal' or 'at_deal' (where a search's subgame ends at a deal)");
  }
  params.solver = solver_params(solver, off_path);
  params.solver.warm_prior = warm_prior;
  params.depth = depth;
  params.iterations = iterations;
  params.warm_iterations = warm_iterations;
  return params;
}

// A policy over `tree` from Python: float64, (tree.size, num_hands) or flat.
std::vector<double> policy_from_py(const py::object& policy, const PublicTree& tree, int H, const std::string& what) {
  const bool flat = py::isinstance<py::array>(policy) && py::reinterpret_borrow<py::array>(policy).ndim() == 1;
  if (flat) return to_double_vector(policy, {static_cast<py::ssize_t>(tree.size()) * H}, what);
  return to_double_vector(policy, {tree.size(), H}, what);
}

py::dict evaluation_to_dict(const SampledEvaluation& e, int rows, int H) {
  py::list counts, expl, brs;
  for (size_t i = 0; i < e.num_policies.size(); ++i) {
    counts.append(e.num_policies[i]);
    expl.append(e.exploitability[i]);
    brs.append(py::make_tuple(e.br_values[i][0], e.br_values[i][1]));
  }
  py::dict d;
  d["num_policies"] = counts;
  d["exploitability"] = expl;
  d["br_values"] = brs;
  d["average_policy"] = to_array_2d(e.average_policy, rows, H);
  return d;
}

}  // namespace

void bind_search(py::module_& m) {
  py::class_<ZeroNet, ValueNet, std::shared_ptr<ZeroNet>>(m, "ZeroNet", "A value net that always answers 0.")
      .def(py::init([](const std::shared_ptr<Game>& game) { return std::make_shared<ZeroNet>(require(game, "game").num_hands()); }),
           py::arg("game"));

  py::class_<OracleNet, ValueNet, std::shared_ptr<OracleNet>>(m, "OracleNet",
      "Exact leaf values: solves the rest of the game below each leaf PBS (small games only).\n"
      "values='root_mean' (default, as the original ReBeL) returns the linear mean of the iterates' root\n"
      "values, which is what a search stopped at a random iteration realises; 'best_response' returns\n"
      "best-response values against the opponent's average policy.")
      .def(py::init([](const std::shared_ptr<Game>& game, const std::string& solver, int iterations,
                       const std::string& values, const std::string& off_path) {
             require(game, "game");
             OracleValues kind;
             if (values == "best_response") kind = OracleValues::kBestResponse;
             else if (values == "root_mean") kind = OracleValues::kRootMean;
             else throw py::value_error("values must be 'best_response' or 'root_mean', got '" + values + "'");
             return std::make_shared<OracleNet>(game, solver_params(solver, off_path), iterations, kind);
           }),
           py::arg("game"), py::arg("solver") = "lcfr", py::arg("iterations") = 1024,
           py::arg("values") = "root_mean", py::arg("off_path") = kDefaultOffPath);

  py::class_<PerturbedNet, ValueNet, std::shared_ptr<PerturbedNet>>(m, "PerturbedNet",
      "A base net's values plus a deterministic error of max norm exactly `delta` over the hands of\n"
      "every query: kind='random' (a fixed random vector per public state and queried player),\n"
      "'bias' (+delta for player 0, -delta for player 1: favours player 0) or 'noise' (a random\n"
      "vector per query row, beliefs included). The same query always gets the same answer;\n"
      "delta = 0 gives the base net's values bit for bit. For the safe-search bound experiment.")
      .def(py::init([](const std::shared_ptr<Game>& game, const std::shared_ptr<ValueNet>& base, double delta,
                       const std::string& kind, uint64_t seed) {
             if (!game) throw py::type_error("game must be a rebel Game");
             if (!base) throw py::type_error("base must be a rebel ValueNet");
             return std::make_shared<PerturbedNet>(base, game->num_hands(), game->feature_size(), delta,
                                                   parse_leaf_error_kind(kind), seed);
           }),
           py::arg("game"), py::arg("base"), py::arg("delta"), py::arg("kind") = "random", py::arg("seed") = 0);

  py::class_<PythonValueNet, ValueNet, std::shared_ptr<PythonValueNet>>(m, "PythonValueNet",
      "Wraps a Python callable f(queries: float32 [B, query_size]) -> [B, num_hands] (numpy or torch).")
      .def(py::init([](const std::shared_ptr<Game>& game, py::object fn, const std::string& name) {
             const int num_hands = require(game, "game").num_hands();
             if (!PyCallable_Check(fn.ptr())) throw py::type_error("PythonValueNet needs a callable");
             return std::make_shared<PythonValueNet>(std::move(fn), num_hands, name);
           }),
           py::arg("game"), py::arg("fn"), py::arg("name") = "python");

  m.def("net_values", [](const std::shared_ptr<ValueNet>& net, const std::shared_ptr<Game>& game,
                         const std::vector<History>& histories, int queried_player,
                         const py::object& beliefs0, const py::object& beliefs1) {
    // Queries `net` at the given leaf PBSs (same beliefs for all); for tests and tools.
    require(net, "net");
    const int H = require(game, "game").num_hands();
    auto b0 = checked_beliefs(to_double_vector(beliefs0, {H}, "beliefs0"), H, "beliefs0");
    auto b1 = checked_beliefs(to_double_vector(beliefs1, {H}, "beliefs1"), H, "beliefs1");
    const int row = query_size(*game), B = static_cast<int>(histories.size());
    std::vector<float> rows(static_cast<size_t>(B) * row, 0.0f);
    LeafQueryBatch batch;
    batch.size = B;
    batch.row_size = row;
    for (int i = 0; i < B; ++i) {
      if (game->is_terminal(histories[i])) throw py::value_error("net_values needs non-terminal histories");
      write_query_row(*game, histories[i], game->player_to_act(histories[i]), queried_player, b0.data(), b1.data(),
                      &rows[static_cast<size_t>(i) * row]);
      batch.histories.push_back(&histories[i]);
      batch.queried_player.push_back(queried_player);
      batch.beliefs0.push_back(b0.data());
      batch.beliefs1.push_back(b1.data());
    }
    batch.rows = rows.data();
    std::vector<double> out(static_cast<size_t>(B) * H);
    net->compute_values(batch, out.data());
    return to_array_2d(out, B, H);
  }, py::arg("net"), py::arg("game"), py::arg("histories"), py::arg("queried_player"), py::arg("beliefs0"), py::arg("beliefs1"));

  py::class_<TabularPolicyNet, PolicyNet, std::shared_ptr<TabularPolicyNet>>(m, "TabularPolicyNet",
      "A fixed full-game policy as a policy net: answers it at every queried public state, whatever the\n"
      "beliefs (a reference net, e.g. an exact equilibrium). TabularPolicyNet(game, policy): policy float64\n"
      "over the game's full tree, (tree.size, num_hands) or flat, in SubgameSolver.current_policy()'s layout;\n"
      "ValueError unless finite, non-negative and summing to 1 (within 1e-6) at every decision node and hand.")
      .def(py::init([](const std::shared_ptr<Game>& game, const py::object& policy) {
             const Game& g = require(game, "game");
             auto tree = std::make_shared<const PublicTree>(build_tree(g, {}, -1));
             std::vector<double> p = policy_from_py(policy, *tree, g.num_hands(), "policy");
             return std::make_shared<TabularPolicyNet>(game, tree, std::move(p));
           }),
           py::arg("game"), py::arg("policy"));

  m.def("policy_net_policies", [](const std::shared_ptr<PolicyNet>& net, const std::shared_ptr<Game>& game,
                                  const std::vector<History>& histories, const py::object& beliefs0,
                                  const py::object& beliefs1) {
    // Queries `net` at the PBSs (histories[i], beliefs0[i], beliefs1[i]); for tests and tools.
    require(net, "net");
    PolicyNet& pn = *net;
    const Game& g = require(game, "game");
    const int H = g.num_hands(), A = g.num_actions(), row = query_size(g);
    const py::ssize_t B = static_cast<py::ssize_t>(histories.size());
    const std::vector<double> b0 = to_double_vector(beliefs0, {B, H}, "beliefs0");
    const std::vector<double> b1 = to_double_vector(beliefs1, {B, H}, "beliefs1");
    std::vector<float> rows(static_cast<size_t>(B) * row, 0.0f);
    PolicyQueryBatch batch;
    batch.size = static_cast<int>(B);
    batch.row_size = row;
    for (py::ssize_t i = 0; i < B; ++i) {
      const History& h = histories[i];
      if (g.is_terminal(h) || g.player_to_act(h) == kChancePlayer) {
        throw py::value_error("policy_net_policies needs histories where a player acts (history " +
                              std::to_string(i) + " is not one)");
      }
      const auto n0 = checked_beliefs(std::vector<double>(&b0[i * H], &b0[i * H] + H), H, "beliefs0");
      const auto n1 = checked_beliefs(std::vector<double>(&b1[i * H], &b1[i * H] + H), H, "beliefs1");
      const int actor = g.player_to_act(h);
      write_query_row(g, h, actor, actor, n0.data(), n1.data(), &rows[static_cast<size_t>(i) * row]);
      batch.histories.push_back(&h);
    }
    batch.rows = rows.data();
    py::array_t<double> out({B, static_cast<py::ssize_t>(H), static_cast<py::ssize_t>(A)});
    double* dst = out.mutable_data();
    {
      py::gil_scoped_release release;
      pn.compute_policies(batch, dst);
    }
    return out;
  }, py::arg("net"), py::arg("game"), py::arg("histories"), py::arg("beliefs0"), py::arg("beliefs1"),
     "float64 [n, num_hands, num_actions]: the net's policy of the player acting at histories[i], with beliefs\n"
     "beliefs0[i], beliefs1[i] (float64 [n, num_hands], normalised here).");

  m.def("policy_net_start", [](const std::shared_ptr<Game>& game, const std::shared_ptr<PublicTree>& tree,
                               const py::object& beliefs0, const py::object& beliefs1,
                               const std::shared_ptr<PolicyNet>& net) {
    const Game& g = require(game, "game");
    const PublicTree& t = require(tree, "tree");
    require(net, "net");
    PolicyNet& pn = *net;
    const py::ssize_t H = g.num_hands();
    const Beliefs b{to_double_vector(beliefs0, {H}, "beliefs0"), to_double_vector(beliefs1, {H}, "beliefs1")};
    std::vector<double> sigma0;
    {
      py::gil_scoped_release release;
      sigma0 = policy_net_start(g, t, b, pn);
    }
    return to_array_2d(sigma0, t.size(), H);
  }, py::arg("game"), py::arg("tree"), py::arg("beliefs0"), py::arg("beliefs1"), py::arg("net"),
     "The warm-start policy sigma0 of `tree` from `net` (csrc/search/policy_start.h), float64\n"
     "(tree.size, num_hands) in SubgameSolver.current_policy()'s layout.");

  py::class_<TestTimeSearch, std::shared_ptr<TestTimeSearch>>(m, "TestTimeSearch",
      "Full-game policies from depth-limited search at every public state reached (safe search).\n"
      "policy_net, warm_iterations K > 0: every subgame solve is first warm-started from the policy\n"
      "net (policy_net_start) for K updates; mode (b) then draws iteration i with weight K + i/2 + 1.\n"
      "warm_prior lambda >= 0 (CFR solvers, K > 0): the warm start's regret prior toward sigma0\n"
      "(csrc/solvers/warm_start.cc); 0, the default, is none. chance_leaves: where a subgame ends at a\n"
      "public deal, 'after_deal' (default) or 'at_deal'.")
      .def(py::init([](const std::shared_ptr<Game>& game, std::shared_ptr<ValueNet> net, const std::string& solver,
                       int depth, int iterations, const std::string& off_path, std::shared_ptr<PolicyNet> policy_net,
                       int warm_iterations, double warm_prior, const std::string& chance_leaves) {
             require(game, "game");
             const SearchParams params = search_params(solver, off_path, depth, iterations, warm_iterations, warm_prior,
                                                       chance_leaves);
             py::gil_scoped_release release;
             return std::make_shared<TestTimeSearch>(game, params, net, policy_net);
           }),
           py::arg("game"), py::arg("net"), py::arg("solver") = "lcfr", py::arg("depth") = 2, py::arg("iterations") = 1024,
           py::arg("off_path") = kDefaultOffPath, py::arg("policy_net") = nullptr, py::arg("warm_iterations") = 0,
           py::arg("warm_prior") = 0.0, py::arg("chance_leaves") = "after_deal")
      .def_property_readonly("chance_leaves", [](const TestTimeSearch& s) { return chance_leaves_name(s.params().chance_leaves); },
                             "Where a subgame ends at a public deal: 'after_deal' (each dealt card is a leaf, the\n"
                             "default and self-play's) or 'at_deal' (the PBS before the card is the leaf and the next root).")
      .def_property_readonly("warm_iterations", [](const TestTimeSearch& s) { return s.params().warm_iterations; })
      .def_property_readonly("warm_prior", [](const TestTimeSearch& s) { return s.params().solver.warm_prior; })
      .def_property_readonly("off_path", [](const TestTimeSearch& s) { return off_path_name(s.params().solver.off_path); })
      .def_property_readonly("full_tree", [](const TestTimeSearch& s) { return std::const_pointer_cast<PublicTree>(s.full_tree_ptr()); })
      .def_property_readonly("num_search_roots", &TestTimeSearch::num_search_roots)
      .def_property_readonly("shared_bytes_per_sample", &TestTimeSearch::shared_bytes_per_sample,
                             "Bytes of leaf beliefs sampled_policies may hold per sample (levels of searches x the\n"
                             "most pseudo-leaves of a subgame x 2 x hands doubles).")
      .def_property_readonly("samples_per_chunk", &TestTimeSearch::samples_per_chunk,
                             "Samples evaluate_sampled computes together (sharing solves): at most 1,024, 1 GiB of\n"
                             "policies and 512 MiB of leaf beliefs (sample_chunk_size). Results do not depend on it.")
      .def("average_policy", [](const TestTimeSearch& s, const py::object& progress) {
        std::vector<double> policy;
        std::atomic<long> done{0};
        run_cancellable([&](std::atomic<bool>* cancel) { policy = s.average_policy(cancel, &done); },
                        [&] {
                          if (!progress.is_none()) progress(done.load());
                        });
        return to_array_2d(policy, s.full_tree().size(), s.game().num_hands());
      }, py::arg("progress") = py::none(),
         "Mode (a): every subgame's average policy. progress(done) is called now and then with the number\n"
         "of subgames solved (of num_search_roots).")
      .def("sampled_policy", [](const TestTimeSearch& s, uint64_t seed) {
        std::vector<double> policy;
        run_cancellable([&](std::atomic<bool>* cancel) { policy = s.sampled_policy(seed, cancel); });
        return to_array_2d(policy, s.full_tree().size(), s.game().num_hands());
      }, py::arg("seed"), "Mode (b): one policy, each subgame stopped at a random iteration (linear weights).")
      .def("sampled_policies", [](const TestTimeSearch& s, const std::vector<uint64_t>& seeds, int threads) {
        if (threads < 1) throw py::value_error("threads must be >= 1");
        std::vector<std::vector<double>> policies;
        run_cancellable([&](std::atomic<bool>* cancel) { policies = s.sampled_policies(seeds, threads, cancel); });
        const size_t size = static_cast<size_t>(s.full_tree().size()) * s.game().num_hands();
        py::array_t<double> out({static_cast<py::ssize_t>(policies.size()), static_cast<py::ssize_t>(s.full_tree().size()),
                                 static_cast<py::ssize_t>(s.game().num_hands())});
        double* data = out.mutable_data();
        for (size_t i = 0; i < policies.size(); ++i) std::copy(policies[i].begin(), policies[i].end(), data + i * size);
        return out;
      }, py::arg("seeds"), py::arg("threads") = 1,
         "Mode (b): the policies sampled_policy(seed) gives for each of `seeds` (bit for bit), computed together:\n"
         "samples that reach a subgame with the same PBS share its solve. Sample k of evaluate_sampled(seed=s)\n"
         "is seed sample_seed(s, k). Shape (len(seeds), nodes, hands).")
      .def("sample_iteration", &TestTimeSearch::sample_iteration, py::arg("uniform01"))
      .def("evaluate_sampled", [](const TestTimeSearch& s, int num_policies, int threads, uint64_t seed,
                                  const py::object& progress) {
        if (num_policies < 1) throw py::value_error("num_policies must be >= 1");
        if (threads < 1) throw py::value_error("threads must be >= 1");
        SampledEvaluation result;
        std::atomic<long> done{0};
        run_cancellable(
            [&](std::atomic<bool>* cancel) { result = evaluate_sampled(s, num_policies, threads, seed, cancel, &done); },
            [&] {
              if (!progress.is_none()) progress(done.load());
            });
        return evaluation_to_dict(result, s.full_tree().size(), s.game().num_hands());
      }, py::arg("num_policies"), py::arg("threads") = 1, py::arg("seed") = 0, py::arg("progress") = py::none(),
         "Mode (b) evaluated exactly: exploitability of the reach-weighted average of 1, 2, 4, ..., N sampled policies.")
      .def("sampled_sum", [](const TestTimeSearch& s, int begin, int end, int threads, uint64_t seed,
                             const py::object& progress) {
        if (begin < 0 || end < begin) throw py::value_error("need 0 <= begin <= end");
        if (threads < 1) throw py::value_error("threads must be >= 1");
        std::vector<double> sum;
        std::atomic<long> done{0};
        run_cancellable(
            [&](std::atomic<bool>* cancel) { sum = sampled_contribution_sum(s, begin, end, threads, seed, cancel, &done); },
            [&] {
              if (!progress.is_none()) progress(done.load());
            });
        return to_array_2d(sum, s.full_tree().size(), s.game().num_hands());
      }, py::arg("begin"), py::arg("end"), py::arg("threads") = 1, py::arg("seed") = 0, py::arg("progress") = py::none(),
         "The reach-weighted sum of mode-(b) samples begin..end-1 (the samples evaluate_sampled draws with this\n"
         "seed), for splitting an evaluation across processes; evaluate_mixture_sum evaluates a sum over [0, n).");

  py::class_<PerfectInfoSearch, std::shared_ptr<PerfectInfoSearch>>(m, "PerfectInfoSearch",
      "Test-time search on a perfect-information game (one hand per player), where the search at a\n"
      "state does not depend on the history that reached it: mode (b) is evaluated exactly in the limit\n"
      "of infinitely many sampled policies by solving each distinct search state once.")
      .def(py::init([](const std::shared_ptr<Game>& game, std::shared_ptr<ValueNet> net, const std::string& solver,
                       int depth, int iterations, const std::string& off_path) {
             require(game, "game");
             const SearchParams params = search_params(solver, off_path, depth, iterations);
             py::gil_scoped_release release;
             return std::make_shared<PerfectInfoSearch>(game, params, net);
           }),
           py::arg("game"), py::arg("net"), py::arg("solver") = "lcfr", py::arg("depth") = 2, py::arg("iterations") = 1024,
           py::arg("off_path") = kDefaultOffPath)
      .def_property_readonly("full_tree", [](const PerfectInfoSearch& s) { return std::const_pointer_cast<PublicTree>(s.full_tree_ptr()); })
      .def_property_readonly("num_states", &PerfectInfoSearch::num_states, "Distinct states where a search starts.")
      .def_property_readonly("num_search_roots", &PerfectInfoSearch::num_search_roots,
                             "Full-tree nodes where a search starts (what TestTimeSearch solves per policy).")
      .def("evaluate", [](const PerfectInfoSearch& s, int threads, const py::object& progress) {
        if (threads < 1) throw py::value_error("threads must be >= 1");
        PerfectInfoEvaluation result;
        std::atomic<long> done{0};
        run_cancellable([&](std::atomic<bool>* cancel) { result = s.evaluate(threads, cancel, &done); },
                        [&] {
                          if (!progress.is_none()) progress(done.load());
                        });
        py::dict d;
        d["exploitability"] = result.exploitability;
        d["br_values"] = py::make_tuple(result.br_values[0], result.br_values[1]);
        d["policy"] = to_array_2d(result.policy, s.full_tree().size(), 1);
        return d;
      }, py::arg("threads") = 1, py::arg("progress") = py::none(),
         "Mode (b) in the limit N -> infinity: {exploitability, br_values, policy}. progress(done) is called\n"
         "now and then with the number of states solved (of num_states).");

  py::class_<Pbs>(m, "Pbs", "Public belief state: a public history plus both players' beliefs (normalised).")
      .def(py::init([](const std::shared_ptr<Game>& game, const History& history, const py::object& beliefs0,
                       const py::object& beliefs1) {
             const py::ssize_t H = require(game, "game").num_hands();
             Beliefs b{beliefs0.is_none() ? game->hand_prior() : to_double_vector(beliefs0, {H}, "beliefs0"),
                       beliefs1.is_none() ? game->hand_prior() : to_double_vector(beliefs1, {H}, "beliefs1")};
             return make_pbs(*game, history, b);
           }),
           py::arg("game"), py::arg("history") = History{}, py::arg("beliefs0") = py::none(),
           py::arg("beliefs1") = py::none())
      .def_readonly("history", &Pbs::history)
      .def_property_readonly("beliefs0", [](const Pbs& p) { return to_array_1d(p.beliefs[0]); })
      .def_property_readonly("beliefs1", [](const Pbs& p) { return to_array_1d(p.beliefs[1]); })
      .def("after", [](const Pbs& p, const std::shared_ptr<Game>& game, Action action, const py::object& probs) {
        const Game& g = require(game, "game");
        if (probs.is_none()) {
          if (g.is_terminal(p.history) || g.player_to_act(p.history) != kChancePlayer) {
            throw py::value_error("action_probs are required at a player's decision");
          }
          return pbs_after(g, p, action, {});
        }
        return pbs_after(g, p, action, to_double_vector(probs, {g.num_hands()}, "action_probs"));
      }, py::arg("game"), py::arg("action"), py::arg("action_probs") = py::none(),
         "The PBS after the player to act takes `action` with probability action_probs[h] per hand; at a "
         "public chance node (no action_probs) after the outcome `action`, both beliefs updated by its "
         "chance factors.");

  m.def("sample_chunk_size", &sample_chunk_size, py::arg("policy_bytes"), py::arg("shared_bytes"),
        "Samples one call of sampled_policies takes in evaluate_sampled: as many as fit 1 GiB of policies\n"
        "(policy_bytes each) and 512 MiB of shared leaf beliefs (shared_bytes each), between 1 and 1,024.");
  m.def("sample_seed", [](uint64_t seed, uint64_t index) { return mix_seed(seed, index); }, py::arg("seed"),
        py::arg("index"),
        "The generator seed of sample `index` of TestTimeSearch.evaluate_sampled(seed=seed) and sampled_sum:\n"
        "sampled_policy(sample_seed(seed, k)) is that evaluation's k-th policy.");
  m.def("bayes_update", [](const py::object& beliefs, const py::object& action_probs) {
    auto b = to_double_vector(beliefs, {-1}, "beliefs");
    auto p = to_double_vector(action_probs, {static_cast<py::ssize_t>(b.size())}, "action_probs");
    b = checked_beliefs(b, static_cast<int>(b.size()), "beliefs");
    double mass = 0.0;
    for (size_t h = 0; h < b.size(); ++h) {
      if (!(p[h] >= 0.0 && p[h] <= 1.0)) throw py::value_error("action_probs must lie in [0, 1]");
      mass += b[h] * p[h];
    }
    if (!(mass > 0.0)) throw py::value_error("the action has probability 0 under these beliefs");
    bayes_update(&b, p.data());
    return to_array_1d(b);
  }, py::arg("beliefs"), py::arg("action_probs"), "Posterior beliefs after an action: b(h) P(a|h), normalised.");
}

}  // namespace rebel_bindings
