"""Property-based fuzzing of every binding that takes user data.

The property, for every generated input: the call either returns the correct result
(checked against an independent NumPy computation) or raises a documented exception
(TypeError for wrong types / dtypes, ValueError for bad values, OSError for unreadable
files); never a crash, a hang or a silently wrong answer. Invalid inputs must raise:
each test decides validity on its own and checks that the binding agrees.

Torch-free, so the ASan/UBSan job of scripts/sanitize.sh runs it too. Seeds are fixed
(tests/helpers/fuzzing.py); the number of cases per property is the max_examples of each test.
"""
from __future__ import annotations

import itertools
import math
import struct
import warnings
import zlib
from typing import Any, List, Optional

import numpy as np
import pytest
from helpers.fuzzing import fuzz_settings
from helpers.mlp_arrays import random_parameters, reference_forward
from hypothesis import given
from hypothesis import strategies as st

import rebel
from rebel import _core
from rebel.nets.weights_io import HEADER_SIZE, read_header, weights_from_arrays

LD14 = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
KUHN = rebel.make_game("kuhn", {})
GAMES = [LD14, KUHN]
USER_ERRORS = (TypeError, ValueError)

# -------------------------------------------------------------------------- strategies

SPECIAL_FLOATS = [0.0, -0.0, 1.0, 0.25, -1.0, 1e-320, 5e-324, 1e-300, 1e300, 1e308, 1.7e308,
                  math.inf, -math.inf, math.nan]
FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64), st.sampled_from(SPECIAL_FLOATS),
                   st.floats(0.0, 1.0))
DTYPES = [np.float64] * 6 + [np.float32, np.int64, np.int8, np.uint8, np.bool_, np.complex128, np.float16, object]
JUNK = ["abc", 3, 2.5, {"a": 1}, b"\x00" * 32, ["x", "y"], [None, None], [[1.0, 2.0]], (), [], object()]


@st.composite
def vectors(draw, n: int) -> Any:
    """A would-be length-n float64 vector: every dtype, shape, layout, value and type."""
    kind = draw(st.sampled_from(["array"] * 6 + ["list", "junk"]))
    if kind == "junk":
        return draw(st.sampled_from(JUNK))
    length = draw(st.sampled_from([n] * 6 + [0, 1, n - 1, n + 1, 2 * n, 100_000]))
    base = draw(st.lists(FLOATS, min_size=1, max_size=max(1, n)))
    values = np.resize(np.array(base, dtype=np.float64), length)
    if draw(st.booleans()):  # mostly valid-looking probabilities
        values = np.abs(np.nan_to_num(values, nan=0.5, posinf=2.0, neginf=3.0))
    if kind == "list":
        return values.tolist()
    dtype = draw(st.sampled_from(DTYPES))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        arr = values.astype(dtype)
    layout = draw(st.sampled_from(["c", "c", "strided", "reversed", "column", "row", "scalar", "readonly"]))
    if layout == "strided":
        arr = np.repeat(arr, 2)[::2]
    elif layout == "reversed":
        arr = arr[::-1][::-1].copy()[::-1]
    elif layout == "column":
        arr = arr.reshape(-1, 1)
    elif layout == "row":
        arr = arr.reshape(1, -1)
    elif layout == "scalar":
        arr = arr[:1].reshape(()) if arr.size else arr
    elif layout == "readonly":
        arr = arr.copy()
        arr.setflags(write=False)
    return arr


def as_valid_vector(x: Any, n: int, allow_zero_mass: bool = False) -> Optional[np.ndarray]:
    """The float64 values the bindings must accept for `x`, or None if they must refuse it."""
    if isinstance(x, list):
        if not all(isinstance(v, float) for v in x):
            return None
        x = np.array(x, dtype=np.float64)
    elif not isinstance(x, np.ndarray) or x.dtype != np.float64:
        return None
    if x.shape != (n,) or not np.all(np.isfinite(x)) or np.any(x < 0):
        return None
    if not allow_zero_mass and not np.any(x > 0):
        return None
    return np.array(x, dtype=np.float64)


def as_valid_reach(x: Any, n: int) -> Optional[np.ndarray]:
    """As as_valid_vector, for a reach: every entry in [0, 1] (a weight times probabilities)."""
    valid = as_valid_vector(x, n, allow_zero_mass=True)
    return None if valid is None or np.any(valid > 1.0) else valid


def call_with_reach(call, x: Any, valid: Optional[np.ndarray]) -> Any:
    """The call's result, or None where it refused `x` with a user error; a refusal of a valid
    reach or the acceptance of an invalid one fails the test."""
    try:
        got = call()
    except USER_ERRORS:
        assert valid is None, f"refused valid reach {x!r}"
        return None
    assert valid is not None, f"accepted invalid reach {x!r}"
    return got


def normalised(x: np.ndarray) -> np.ndarray:
    """x / sum(x), also where the sum overflows (scaled by the largest entry first)."""
    scaled = x / x.max()
    return scaled / scaled.sum()


def refused(call, *args, **kwargs) -> bool:
    """True if the call raised a documented user error; the result is ignored."""
    try:
        call(*args, **kwargs)
    except USER_ERRORS:
        return True
    return False


# ------------------------------------------------------------------- beliefs and reaches

@fuzz_settings(400)
@given(game=st.sampled_from(GAMES), data=st.data())
def test_beliefs_are_normalised_or_refused(game, data):
    H = game.num_hands
    x = data.draw(vectors(H), label="beliefs")
    valid = as_valid_vector(x, H)
    prior = np.asarray(game.hand_prior)
    tree = rebel.build_tree(game, [], 1)
    np.testing.assert_array_equal(rebel.Pbs(game, [], None, None).beliefs0, prior)  # None: the prior
    results = {}
    calls = {
        "Pbs": lambda: rebel.Pbs(game, [], x, None).beliefs0,
        "SubgameSolver": lambda: rebel.SubgameSolver(game, tree, beliefs0=x, net=_core.ZeroNet(game)).root_beliefs(0),
        "bayes_update": lambda: rebel.bayes_update(x, np.ones(H)),
        "net_values": lambda: _core.net_values(_core.ZeroNet(game), game, [[0]], 0, x, prior)[:0, 0],
        "SelfPlayGenerator.step": lambda: _core.SelfPlayGenerator(game, _core.ZeroNet(game), iterations=2)
        .step([], x, prior, 0).rows[0, 2 + game.feature_size: 2 + game.feature_size + H].astype(np.float64),
    }
    for name, call in calls.items():
        try:
            results[name] = call()
        except USER_ERRORS:
            assert valid is None, f"{name} refused valid beliefs {x!r}"
            continue
        assert valid is not None, f"{name} accepted invalid beliefs {x!r}"
    if valid is None:
        return
    expected = normalised(valid)
    for name, got in results.items():
        if got.size == 0:  # net_values: accepted or refused is all there is to check
            continue
        float32 = name == "SelfPlayGenerator.step"  # query rows are float32
        np.testing.assert_allclose(got, expected, rtol=1e-6 if float32 else 1e-12, atol=1e-30 if float32 else 1e-300,
                                   err_msg=name)


@fuzz_settings(200)
@given(data=st.data())
def test_terminal_values_reach_is_checked(data):
    # 1x4f, bid 7 ("two 3s", 3 is the wild face), then player 1 calls: the bid holds iff
    # both dice are 3s. Values are linear in the opponent's reach: the columns come from
    # unit reaches, whose signs are known (+ iff both hold a 3).
    history = [7, 8]
    unit = np.column_stack([LD14.terminal_values(history, 0, np.eye(4)[o]) for o in range(4)])
    signs = np.where(np.outer(np.arange(4) == 3, np.arange(4) == 3), 1.0, -1.0)
    assert np.all(np.sign(unit) == signs)
    x = data.draw(vectors(4), label="opp_reach")
    valid = as_valid_reach(x, 4)
    got = call_with_reach(lambda: LD14.terminal_values(history, 0, x), x, valid)
    if got is None:
        return
    assert valid is not None
    # Sums of +-reach cancel: the error scale is the total reach, not each value.
    np.testing.assert_allclose(got, unit @ valid, rtol=1e-12, atol=1e-12 * max(1e-300, float(valid.sum())))


@fuzz_settings(200)
@given(beliefs=vectors(4), probs=vectors(4))
def test_bayes_update_is_the_posterior_or_refused(beliefs, probs):
    n = len(beliefs) if isinstance(beliefs, list) or (isinstance(beliefs, np.ndarray) and beliefs.ndim == 1) else 4
    b, p = as_valid_vector(beliefs, n), as_valid_vector(probs, n, allow_zero_mass=True)
    valid = b is not None and p is not None and np.all(p <= 1.0) and np.any(normalised(b) * p > 0)
    try:
        got = rebel.bayes_update(beliefs, probs)
    except USER_ERRORS:
        assert not valid, f"refused beliefs {beliefs!r} with probabilities {probs!r}"
        return
    assert valid, f"accepted beliefs {beliefs!r} with probabilities {probs!r}"
    posterior = normalised(b) * p
    np.testing.assert_allclose(got, posterior / posterior.sum(), rtol=1e-12, atol=1e-300)


# ----------------------------------------------------------------------------- histories

def legal_prefix(game: rebel.Game, history: List[int]) -> tuple:
    """(is every action legal, ends at a terminal), walking with the game's own rules."""
    prefix: List[int] = []
    for a in history:
        if game.is_terminal(prefix) or a not in game.legal_actions(prefix):
            return False, False
        prefix.append(a)
    return True, game.is_terminal(prefix)


@st.composite
def histories(draw, game: rebel.Game) -> List[int]:
    """A legal walk of random length, then maybe one random (often illegal) action."""
    h: List[int] = []
    for _ in range(draw(st.integers(0, 12))):
        if game.is_terminal(h):
            break
        h.append(draw(st.sampled_from(game.legal_actions(h))))
    tail = draw(st.one_of(st.just([]), st.lists(st.integers(-3, game.num_actions + 2), max_size=2),
                          st.lists(st.integers(-2 ** 63, 2 ** 63), max_size=1)))
    return h + tail


@fuzz_settings(300)
@given(data=st.data())
def test_histories_are_checked_everywhere(data):
    game = data.draw(st.sampled_from(GAMES), label="game")
    history = data.draw(histories(game), label="history")
    depth = data.draw(st.sampled_from([-1, 1, 2, 3, 0, -2, 2 ** 31 - 1]), label="depth")
    in_range = all(-2 ** 31 <= a < 2 ** 31 for a in history)
    legal, terminal = legal_prefix(game, [a for a in history]) if in_range else (False, False)
    prior = np.asarray(game.hand_prior)

    # Queries answered for every legal history, refused for the rest.
    assert refused(game.is_terminal, history) == (not legal)
    assert refused(game.legal_actions, history) == (not legal)
    assert refused(game.player_to_act, history) == (not legal or terminal)
    assert refused(rebel.Pbs, game, history) == (not legal)
    assert refused(game.count_tree_nodes, history, 2) == (not legal)

    # build_tree: legal, non-terminal, depth -1 or >= 1.
    depth_ok = depth == -1 or depth >= 1
    try:
        tree = rebel.build_tree(game, history, depth)
    except USER_ERRORS:
        assert not (legal and not terminal and depth_ok)
        tree = None
    else:
        assert legal and not terminal and depth_ok
        assert tree.history(0) == history and tree.game == game.description()
        assert tree.size == game.count_tree_nodes(history, depth)
        # find() of every node's history relative to the root gives the node back.
        for n in range(0, tree.size, max(1, tree.size // 7)):
            assert tree.find(tree.history(n)[len(history):]) == n
    if tree is not None:
        # A fuzzed lookup: -1 or the node whose history it is.
        probe = data.draw(st.lists(st.integers(-2, game.num_actions + 1), max_size=4), label="probe")
        node = tree.find(probe)
        assert node == -1 or tree.history(node) == history + probe

    # Self-play steps start from any legal non-terminal history.
    generator = _core.SelfPlayGenerator(game, _core.ZeroNet(game), iterations=2, depth=1)
    assert refused(generator.step, history, prior, prior, 0) == (not legal or terminal)


# ------------------------------------------------------------------------ game parameters

PARAM_VALUES = st.one_of(st.integers(-1, 8), st.integers(-3, 5000), st.integers(-2 ** 70, 2 ** 70),
                         st.sampled_from([2 ** 31 - 1, 2 ** 31, -2 ** 31, 4096, 4097, 24, 33]),
                         st.floats(allow_nan=True), st.booleans(), st.text(max_size=3), st.none())


def liars_dice_in_range(dice: int, faces: int) -> bool:
    """The documented limits: 1 <= num_dice <= 32, num_faces >= 2, faces^(dice+1) <= 2^24."""
    return 1 <= dice <= 32 and faces >= 2 and faces ** (dice + 1) <= 2 ** 24


@fuzz_settings(300)
@given(name=st.sampled_from(["liars_dice", "liars_dice", "kuhn", "", "Kuhn", "liars dice", "chess"]),
       params=st.dictionaries(st.sampled_from(["num_dice", "num_faces", "num_faces", "num_dice", "num_cards", "", "x"]),
                              PARAM_VALUES, max_size=3))
def test_game_parameters_at_and_beyond_their_limits(name, params):
    accepted = {"liars_dice": {"num_dice", "num_faces"}, "kuhn": set()}.get(name)
    valid = (accepted is not None and set(params) <= accepted
             and all(isinstance(v, int) and not isinstance(v, bool) for v in params.values()))
    if valid and name == "liars_dice":
        merged = {"num_dice": 1, "num_faces": 4, **params}
        valid = liars_dice_in_range(merged["num_dice"], merged["num_faces"])
    try:
        game = rebel.make_game(name, params)
    except USER_ERRORS as e:
        assert not valid, f"refused {name} {params}: {e}"
        return
    assert valid, f"accepted {name} {params}"
    for k, v in params.items():
        assert game.params[k] == v
    if name == "liars_dice":
        assert game.num_hands == merged["num_faces"] ** merged["num_dice"]
        assert game.num_actions == 2 * merged["num_dice"] * merged["num_faces"] + 1
    assert len(game.hand_prior) == game.num_hands and abs(float(np.sum(game.hand_prior)) - 1.0) < 1e-9
    if game.count_tree_nodes([], 2) * game.num_hands < 1_000_000:
        tree = rebel.build_tree(game, [], 2)
        assert tree.size == game.count_tree_nodes([], 2)


@fuzz_settings(60)
@given(a=st.sampled_from(range(4)), b=st.sampled_from(range(4)), which=st.sampled_from(range(6)))
def test_a_tree_is_only_used_with_its_own_game(a, b, which):
    games = [LD14, KUHN, rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 5}),
             rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})]
    game, tree = games[a], rebel.build_tree(games[b])
    policy = np.full((tree.size, game.num_hands), 0.5)
    calls = [lambda: rebel.uniform_policy(game, tree), lambda: rebel.SubgameSolver(game, tree).run(2),
             lambda: rebel.exploitability(game, tree, policy), lambda: rebel.best_response(game, tree, policy, 0),
             lambda: rebel.expected_value(game, tree, policy), lambda: _core.MccfrSolver(game, tree).run(10)]
    if a == b:
        calls[which]() if which < 2 or which == 5 else None
        return
    with pytest.raises(ValueError, match="does not belong"):
        calls[which]()


@pytest.mark.parametrize("call", [
    lambda g, t: rebel.ZeroNet(None), lambda g, t: rebel.OracleNet(None), lambda g, t: rebel.SubgameSolver(None, t),
    lambda g, t: rebel.exploitability(None, t, None), lambda g, t: rebel.Pbs(None),
    lambda g, t: rebel.PythonValueNet(None, abs), lambda g, t: rebel.TestTimeSearch(None, None),
    lambda g, t: rebel.build_tree(None), lambda g, t: rebel.uniform_policy(None, t),
    lambda g, t: _core.net_values(None, g, [[0]], 0, g.hand_prior, g.hand_prior),
    lambda g, t: _core.net_values(rebel.ZeroNet(g), None, [[0]], 0, g.hand_prior, g.hand_prior),
    lambda g, t: rebel.best_response(None, t, None, 0), lambda g, t: rebel.expected_value(None, t, None),
    lambda g, t: rebel.validate_policy(None, t, None), lambda g, t: rebel.MccfrSolver(None, t),
    lambda g, t: rebel.Pbs(g).after(None, 0, g.hand_prior), lambda g, t: rebel.SelfPlayGenerator(None),
    lambda g, t: rebel.MlpValueNet(None, b""),
], ids=lambda c: "")
def test_none_for_a_game_is_a_type_error(call):
    # Found by the fuzzing above: None for the game dereferenced a null pointer (SIGSEGV).
    with pytest.raises(TypeError, match="must not be None|incompatible function arguments"):
        call(LD14, rebel.build_tree(LD14))


# -------------------------------------------------------------------------- weights bytes

def weights_valid(data: bytes) -> bool:
    """The format's rules, checked in Python: header, size, CRC-32, finite payload."""
    try:
        header = read_header(data)
    except ValueError:
        return False
    body = len(data) - 4
    if zlib.crc32(data[:body]) != struct.unpack_from("<I", data, body)[0]:
        return False
    payload = np.frombuffer(data, dtype="<f4", count=header.payload_floats, offset=HEADER_SIZE)
    return bool(np.all(np.isfinite(payload)))


def small_weights(game: rebel.Game, layers: int) -> tuple:
    params = random_parameters(game.query_size, game.num_hands, 8, layers, seed=layers)
    return params, weights_from_arrays(game.query_size, game.num_hands, 8, layers, params)


@st.composite
def corrupted_weights(draw) -> tuple:
    layers = draw(st.sampled_from([0, 1, 2]))
    params, data = small_weights(LD14, layers)
    data = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["truncate", "flip", "flip_header", "reseal_flip", "append", "byte", "none"]))
        if op == "truncate":
            del data[draw(st.integers(0, max(0, len(data) - 1))):]
        elif op in ("flip", "flip_header", "reseal_flip") and data:
            end = min(len(data), HEADER_SIZE) if op == "flip_header" else len(data)
            i = draw(st.integers(0, end - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
            if op == "reseal_flip" and len(data) > 4:  # a consistent checksum over the change
                data[-4:] = struct.pack("<I", zlib.crc32(bytes(data[:-4])))
        elif op == "append":
            data += draw(st.binary(min_size=1, max_size=8))
        elif op == "byte" and data:
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    return layers, params, bytes(data)


@fuzz_settings(400)
@given(case=corrupted_weights(), source=st.sampled_from(["bytes", "bytearray", "memoryview", "file", "swap"]))
def test_corrupted_weights_are_refused_or_exact(case, source, tmp_path_factory):
    layers, params, data = case
    valid = weights_valid(data)
    good = small_weights(LD14, layers)[1]
    try:
        if source == "file":
            path = tmp_path_factory.mktemp("w") / "w.bin"
            path.write_bytes(data)
            net = _core.MlpValueNet(LD14, str(path))
        elif source == "swap":
            net = _core.MlpValueNet(LD14, good)
            net.set_weights_bytes(data)
        else:
            net = _core.MlpValueNet(LD14,
                                    {"bytes": bytes, "bytearray": bytearray, "memoryview": memoryview}[source](data))
    except ValueError:
        assert not valid, "refused a valid weights file"
        if source == "swap":  # a refused swap keeps the old weights
            x = np.ones((2, LD14.query_size), dtype=np.float32)
            np.testing.assert_array_equal(net.forward(x), _core.MlpValueNet(LD14, good).forward(x))
        return
    assert valid, "accepted a malformed weights file"
    # Accepted (possibly a re-sealed bit flip): the net computes exactly what the bytes say.
    header = read_header(data)
    payload = np.frombuffer(data, dtype="<f4", count=header.payload_floats, offset=HEADER_SIZE)
    shapes = [p.shape for p in params]
    parsed, offset = [], 0
    for shape in shapes:
        n = int(np.prod(shape))
        parsed.append(payload[offset: offset + n].reshape(shape))
        offset += n
    x = np.random.default_rng(0).standard_normal((5, LD14.query_size)).astype(np.float32)
    got = net.forward(x)
    assert got.shape == (5, LD14.num_hands)
    if max(np.abs(p).max() for p in parsed) > 1e4 or not 1e-12 < header.layer_norm_eps < 1e4:
        return  # a flipped exponent bit: float32 overflow, not comparable with a float64 reference
    expected = reference_forward(parsed, header.num_layers, x, header.layer_norm_eps)
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-3,
                               atol=1e-3 * (1 + np.abs(expected[finite]).max(initial=0)))


@fuzz_settings(200)
@given(x=vectors(18), batch=st.sampled_from([0, 1, 3, 17, 64]))
def test_mlp_forward_input_is_checked(x, batch):
    params, data = small_weights(LD14, 2)
    net = _core.MlpValueNet(LD14, data)
    rows = x if not isinstance(x, np.ndarray) or x.ndim != 1 else np.resize(x, (batch, x.size))
    ok = isinstance(rows, np.ndarray) and rows.dtype == np.float32 and rows.ndim == 2 and rows.shape[1] == 18
    try:
        got = net.forward(rows)
    except USER_ERRORS:
        assert not ok
        return
    assert ok
    assert got.shape == (rows.shape[0], 4) and got.dtype == np.float32
    finite = np.all(np.isfinite(rows), axis=1) & np.all(np.abs(rows) < 1e6, axis=1)
    if np.any(finite):
        expected = reference_forward(params, 2, rows[finite])
        np.testing.assert_allclose(got[finite], expected, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------ Python value nets

NET_OUTPUTS = ["ok", "float32", "int", "bool", "complex", "object", "strings", "nan", "inf", "short", "long", "1d",
               "3d", "transposed", "scalar", "none", "list", "raise_runtime", "raise_keyboard", "huge", "fortran"]


def make_output(kind: str, queries: np.ndarray, H: int) -> Any:
    B = queries.shape[0]
    base = np.tanh(queries[:, 1:2].astype(np.float64) + np.arange(H) * 0.1)
    return {
        "ok": base, "float32": base.astype(np.float32), "int": np.ones((B, H), dtype=np.int64),
        "bool": np.ones((B, H), dtype=bool), "complex": base.astype(np.complex128), "object": base.astype(object),
        "strings": np.full((B, H), "1.0"), "nan": np.where(np.arange(H) == 0, np.nan, base),
        "inf": np.where(np.arange(H) == 0, np.inf, base), "short": base[:-1], "long": np.vstack([base, base]),
        "1d": base.ravel(), "3d": base[None], "transposed": base.T if B != H else base[:, :-1],
        "scalar": np.float64(1.0),
        "none": None, "list": base.tolist(), "huge": np.full((B, H), 1e308), "fortran": np.asfortranarray(base),
    }[kind]


@fuzz_settings(150)
@given(kinds=st.lists(st.sampled_from(NET_OUTPUTS), min_size=1, max_size=4), game=st.sampled_from(GAMES))
def test_python_value_net_outputs_are_checked(kinds, game):
    H = game.num_hands
    calls = {"n": 0}

    def net_fn(queries: np.ndarray) -> Any:
        kind = kinds[min(calls["n"], len(kinds) - 1)]
        calls["n"] += 1
        if kind == "raise_runtime":
            raise RuntimeError("fuzzed net failure")
        if kind == "raise_keyboard":
            raise KeyboardInterrupt
        return make_output(kind, queries, H)

    accepted = {"ok", "float32", "int", "list", "huge", "fortran"}
    tree = rebel.build_tree(game, [], 1)
    solver = rebel.SubgameSolver(game, tree, net=_core.PythonValueNet(game, net_fn))
    try:
        solver.run(len(kinds))
    except (TypeError, ValueError, RuntimeError, KeyboardInterrupt) as e:
        bad = next(k for k in kinds if k not in accepted)
        if bad == "raise_runtime":
            assert isinstance(e, RuntimeError) and "fuzzed net failure" in str(e)
        elif bad == "raise_keyboard":
            assert isinstance(e, KeyboardInterrupt)
        else:
            assert isinstance(e, ValueError) and "python value net" in str(e), repr(e)
        return
    assert all(k in accepted for k in kinds), f"accepted {kinds}"
    assert solver.num_steps == len(kinds)
    values = np.concatenate([solver.root_values(0), solver.root_values(1)])
    assert np.all(np.isfinite(values))
    # The values used are exactly what the callable returned: replay with a plain float64 net.
    replayed = iter(kinds)
    reference = rebel.SubgameSolver(game, tree, net=_core.PythonValueNet(
        game, lambda q: np.asarray(make_output(next(replayed), q, H), dtype=np.float64)))
    reference.run(len(kinds))
    np.testing.assert_array_equal(values, np.concatenate([reference.root_values(0), reference.root_values(1)]))


# ------------------------------------------------------------------- hold'em endgames


def _river_endgame() -> Any:
    """A river spot on a 6-rank, 3-suit deck (board 4h5c7d2c6d, 78 hands a player): OOP checks
    (showdown for 50 each) or bets 50 that IP folds or calls (showdown for 100 each)."""
    cards = [r * 4 + s for r in range(6) for s in range(3)]
    board = _core.parse_cards("4h5c7d2c6d")
    hands = np.array([h for h in itertools.combinations(cards, 2) if not set(h) & set(board)], np.int32)
    weights = np.ones(len(hands))
    tree = dict(kind=np.array([0, 3, 0, 2, 3], np.int8), player=np.array([0, -1, 1, 1, -1], np.int8),
                street=np.full(5, 2, np.int8), child_start=np.array([0, 2, 2, 4, 4, 4], np.int32),
                children=np.array([1, 2, 3, 4], np.int32),
                invested=np.array([[50, 50], [50, 50], [100, 50], [100, 50], [100, 100]], np.float64),
                labels=["", "check", "bet 50", "fold", "call"])
    return _core.HoldemEndgame(board, cards, hands, weights, hands, weights, **tree)


HOLDEM_RIVER = _river_endgame()


@fuzz_settings(200)
@given(data=st.data())
def test_holdem_terminal_values_reach_is_checked(data):
    # The linear showdown and fold sums against the dense pairwise oracle, or a refusal.
    game = HOLDEM_RIVER
    n = game.num_hands(1)
    node = data.draw(st.sampled_from([1, 3, 4]), label="node")
    x = data.draw(vectors(n), label="opp_reach")
    valid = as_valid_reach(x, n)
    got = call_with_reach(lambda: game.terminal_values(node, 0, x), x, valid)
    if got is None:
        return
    assert valid is not None
    expected = game.terminal_values(node, 0, valid, dense=True)
    # Sums of +-reach cancel: the error scale is the total reach times the stake.
    scale = 100.0 * max(1e-300, float(valid.sum()))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * scale)
