"""rebel: ReBeL (search plus learned public-belief-state values) for two-player zero-sum games.

The C++ core lives in :mod:`rebel._core`; the Python layer adds policies, the CLI,
the value-net definition and training.
"""
from rebel._core import (  # noqa: F401  (re-exported public API)
    Game,
    MccfrSolver,
    MlpValueNet,
    OracleNet,
    Pbs,
    PerturbedNet,
    PublicTree,
    PythonValueNet,
    SelfPlayGenerator,
    SelfPlayStep,
    SubgameSolver,
    TestTimeSearch,
    ValueNet,
    ZeroNet,
    bayes_update,
    best_response,
    build_tree,
    expected_value,
    exploitability,
    list_games,
    make_game,
    matrix_game,
    net_values,
    solve_matrix_game,
    uniform_policy,
    validate_policy,
)
from rebel.util.concise_errors import concise_type_errors as _concise  # noqa: E402

# The functions that take policy arrays: a wrong call names the arguments' types and shapes
# instead of printing the arrays (pybind11's message).
best_response = _concise(best_response)
expected_value = _concise(expected_value)
exploitability = _concise(exploitability)
validate_policy = _concise(validate_policy)

from rebel.games import game_config, game_from_config  # noqa: E402,F401
from rebel.interop.policy_io import load_policy, save_policy  # noqa: E402,F401
from rebel.search.solve import SolveResult, solve  # noqa: E402,F401

__version__ = "0.1.0"
