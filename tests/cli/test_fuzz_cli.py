"""Property-based fuzzing of the user-facing file and command-line inputs:
policy files (JSON and .npz corruptions), configuration files and overrides (random keys,
types, YAML garbage) and the CLI with generated argument lists.

Properties: a policy file either loads as a valid policy or raises ValueError / OSError;
a configuration either resolves or raises ConfigError (a ValueError); the CLI exits with
status 0 or 2 and never prints a traceback. Seeds are fixed (tests/helpers/fuzzing.py).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import string
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest
import yaml
from conftest import REPO_ROOT, kuhn, liars_dice, solved
from helpers.fuzzing import fuzz_settings
from helpers.mlp_arrays import random_weights
from hypothesis import assume, given
from hypothesis import strategies as st

import rebel
from rebel.config.common import ConfigError
from rebel.config.eval import load_eval_config
from rebel.config.solve import load_solve_config
from rebel.config.train import load_train_config
from rebel.interop.policy_io import load_policy, save_policy

CASE_TIMEOUT_S = 60  # a case running longer than this counts as a hang


@contextlib.contextmanager
def hang_guard(seconds: int = CASE_TIMEOUT_S):
    """Raises TimeoutError in the main thread after `seconds` (the C++ loops check signals)."""
    def on_alarm(signum, frame):
        raise TimeoutError(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ---------------------------------------------------------------------------- policy files

def policy_games() -> List[rebel.Game]:
    return [kuhn(), liars_dice(1, 3)]


@st.composite
def json_mutations(draw, doc: Dict[str, Any]) -> Any:
    """A structural edit of a policy JSON document (key, value and type changes)."""
    doc = json.loads(json.dumps(doc))
    kind = draw(st.sampled_from(["drop_key", "add_key", "value", "type", "row_length", "game", "top", "none"]))
    keys = sorted(doc["policy"])
    key = draw(st.sampled_from(keys))
    if kind == "drop_key":
        del doc["policy"][key]
    elif kind == "add_key":
        doc["policy"][draw(st.text(string.printable, max_size=8))] = [0.5, 0.5]
    elif kind == "value":
        row = doc["policy"][key]
        i = draw(st.integers(0, len(row) - 1))
        row[i] = draw(st.one_of(st.floats(allow_nan=False), st.sampled_from([0.0, 1.0, -0.0, 1e-12, 2.0, -1.0])))
    elif kind == "type":
        doc["policy"][key] = draw(st.sampled_from([None, "0.5", {"a": 1}, [[0.5]], True, [True, False], 1]))
    elif kind == "row_length":
        doc["policy"][key] = doc["policy"][key] + [0.0] if draw(st.booleans()) else doc["policy"][key][:-1]
    elif kind == "game":
        doc["game"] = draw(st.sampled_from([None, {}, {"name": "kuhn"},
                                            {"name": "liars_dice", "num_dice": 1, "num_faces": 4},
                                            {"name": "liars_dice", "num_faces": 3}, {"name": "chess"}, "kuhn",
                                            {"name": "liars_dice", "num_dice": 10 ** 30}]))
    elif kind == "top":
        doc = draw(st.sampled_from([[], None, "x", 1, {"policy": doc["policy"]}, {"game": doc["game"]}]))
    return doc


@st.composite
def byte_mutations(draw, data: bytes) -> bytes:
    data = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["truncate", "flip", "byte", "insert", "delete"]))
        if not data:
            break
        i = draw(st.integers(0, len(data) - 1))
        if op == "truncate":
            del data[i:]
        elif op == "flip":
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "byte":
            data[i] = draw(st.integers(0, 255))
        elif op == "insert":
            data[i:i] = draw(st.binary(min_size=1, max_size=4))
        else:
            del data[i: i + draw(st.integers(1, 16))]
    return bytes(data)


def check_loaded_or_refused(path: Path, game: rebel.Game, original: np.ndarray, unchanged: bool) -> None:
    try:
        with hang_guard():
            loaded = load_policy(path, expected_game=game if path.stat().st_size % 2 else None)
    except (ValueError, OSError):
        assert not unchanged, "refused an intact policy file"
        return
    assert loaded.game.description() == game.description()
    rebel.validate_policy(loaded.game, loaded.tree, loaded.policy)  # a valid policy or it would raise
    if unchanged:
        np.testing.assert_array_equal(loaded.policy, original)


@fuzz_settings(200)
@given(data=st.data())
def test_corrupted_policy_files_are_refused_or_valid(data, tmp_path_factory):
    game = data.draw(st.sampled_from(policy_games()), label="game")
    suffix = data.draw(st.sampled_from([".json", ".npz"]), label="format")
    policy = solved(game, "lcfr", 64).policy
    path = tmp_path_factory.mktemp("policy") / f"p{suffix}"
    save_policy(path, game, policy)
    original = path.read_bytes()
    how = data.draw(st.sampled_from(["bytes", "structure"] if suffix == ".json" else ["bytes", "arrays"]), label="how")
    if how == "bytes":
        path.write_bytes(data.draw(byte_mutations(original), label="mutation"))
    elif how == "structure":
        path.write_text(json.dumps(data.draw(json_mutations(json.loads(original)), label="mutation")))
    else:  # a well-formed archive with an edited array
        with np.load(path, allow_pickle=False) as archive:
            arrays = {k: archive[k] for k in archive.files}
        name = data.draw(st.sampled_from(sorted(arrays)), label="array")
        edit = data.draw(st.sampled_from(["nan", "negative", "shape", "dtype", "drop", "object"]), label="edit")
        a = arrays[name]
        if edit == "drop":
            del arrays[name]
        elif edit == "shape":
            arrays[name] = a.reshape(-1)[:-1] if a.size > 1 else np.zeros((2, 2))
        elif edit == "dtype":
            arrays[name] = a.astype(np.float32) if a.dtype.kind == "f" else np.zeros(3, dtype=np.int16)
        elif edit == "object":
            arrays[name] = np.array([{"x": 1}], dtype=object)
        elif a.dtype.kind == "f" and a.size:
            a = a.copy()
            a.flat[data.draw(st.integers(0, a.size - 1))] = np.nan if edit == "nan" else -0.5
            arrays[name] = a
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        path.write_bytes(buffer.getvalue())
    check_loaded_or_refused(path, game, policy, unchanged=path.read_bytes() == original)


def test_policy_npz_with_pickled_objects_is_refused(tmp_path):
    path = tmp_path / "p.npz"
    with zipfile.ZipFile(path, "w") as z:
        buffer = io.BytesIO()
        np.save(buffer, np.array([{"x": 1}], dtype=object), allow_pickle=True)
        z.writestr("policy.npy", buffer.getvalue())
    with pytest.raises(ValueError):
        load_policy(path)


# ------------------------------------------------------------------- configuration files

SECTIONS = ["game", "solver", "search", "output", "trainer", "run", "selfplay", "x", ""]
KEYS = ["name", "num_dice", "num_faces", "iterations", "net", "depth", "threads", "repeats", "off_path", "json",
        "policy_out", "dcfr_alpha", "optimistic", "lr", "seed", "mode_a", "epochs", "max_minutes", "batch_size",
        "bogus", ""]
SCALARS = st.one_of(st.integers(-3, 3), st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=True), st.booleans(),
                    st.none(), st.sampled_from(["lcfr", "kuhn", "liars_dice", "zero", "skip", "", "???", "1e3"]),
                    st.text(max_size=4))
YAML_VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                            st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)),
                           max_leaves=6)


@st.composite
def yaml_texts(draw) -> str:
    kind = draw(st.sampled_from(["structured", "structured", "garbage", "scalar"]))
    if kind == "garbage":
        return draw(st.one_of(st.text(max_size=60),
                              st.sampled_from(["{", "a: [", ": :", "\t- x", "!!python/object:os.system x",
                                               "a: &x [*x]", "%YAML 9.9\n---", "\x00", "a: b: c"])))
    if kind == "scalar":
        return yaml.safe_dump(draw(SCALARS))
    doc = draw(st.dictionaries(st.sampled_from(SECTIONS), st.one_of(st.dictionaries(st.sampled_from(KEYS), YAML_VALUES,
                                                                                   max_size=4), SCALARS), max_size=3))
    return yaml.safe_dump(doc)


OVERRIDES = st.lists(st.one_of(
    st.builds(lambda s, k, v: f"{s}.{k}={v}", st.sampled_from(SECTIONS), st.sampled_from(KEYS),
              st.one_of(st.integers(-5, 5).map(str),
                        st.sampled_from(["", "x", "[1,2]", "{a: 1}", "null", "nan", "1e400",
                                         "true", "kuhn", "'quoted", "${oops}", "2" * 30]))),
    st.text(max_size=12)), max_size=3)


@fuzz_settings(300)
@given(text=st.one_of(st.none(), yaml_texts()), overrides=OVERRIDES, which=st.sampled_from(["solve", "eval", "train"]))
def test_configs_resolve_or_raise_config_error(text, overrides, which, tmp_path_factory):
    path = None
    if text is not None:
        path = tmp_path_factory.mktemp("cfg") / "c.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    load = {"solve": load_solve_config, "eval": load_eval_config, "train": load_train_config}[which]
    try:
        with hang_guard():
            cfg = load(str(path) if path else None, overrides)
    except ConfigError as e:
        assert str(e).strip()
        return
    # Resolved: typed values within the schema, and the game builds.
    assert isinstance(cfg.game.make(), rebel.Game)
    section = cfg.solver if which == "solve" else cfg.search
    assert isinstance(section.iterations, int) and not isinstance(section.iterations, bool)


# -------------------------------------------------------------------------------- the CLI

@st.composite
def cli_arguments(draw, tmp: Path) -> List[str]:
    """A generated argument list: a subcommand, then flags, overrides and files, valid or not."""
    command = draw(st.sampled_from(["solve", "solve", "eval", "eval", "games", "train", "frobnicate", "", "--version"]))
    args: List[str] = [command] if command else []
    small = st.sampled_from(["0", "1", "2", "-1", "x", "", "1.5", "1e3", "nan", "99999999999999999999", "2147483648"])
    flags = {
        "solve": {"--game": st.sampled_from(["kuhn", "liars_dice", "chess", "", "KUHN"]),
                  "--dice": st.sampled_from(["1", "2", "0", "-1", "5", "x", "2147483648"]),
                  "--faces": st.sampled_from(["2", "3", "4", "1", "6", "0", "x", "4097"]),
                  "--solver": st.sampled_from(["lcfr", "cfr", "cfr+", "dcfr", "fp", "lfp", "cfr++", ""]),
                  "--iters": st.sampled_from(["0", "1", "16", "-3", "x", "1e2", "99999999999999999999"]),
                  "--dcfr-alpha": st.sampled_from(["1.5", "nan", "inf", "-1", "x"]),
                  "--off-path": st.sampled_from(["skip", "floor", "conditional", "none"]),
                  "--optimistic": None, "--json": None, "--no-progress": None,
                  "--policy-out": st.sampled_from(["p.json", "p.npz", "p.txt", "missing/p.json", ".", ""]),
                  "--config": st.sampled_from(["good.yaml", "bad.yaml", "garbage.yaml", "missing.yaml", "."])},
        "eval": {"--game": st.sampled_from(["kuhn", "liars_dice", "chess"]),
                 "--dice": st.sampled_from(["1", "0", "x"]), "--faces": st.sampled_from(["3", "4", "1", "x"]),
                 "--net": st.sampled_from(["zero", "oracle", "w.bin", "w_other.bin", "broken.bin", "missing.bin", ".",
                                           "garbage.yaml"]),
                 "--solver": st.sampled_from(["cfr", "fp", "lcfr", "dcfr", "bogus"]), "--depth": small,
                 "--iters": small, "--repeats": small,
                 "--threads": st.sampled_from(["1", "2", "0", "-1", "100000", "x"]),
                 "--seed": st.sampled_from(["0", "-1", "18446744073709551616", "x"]), "--oracle-iters": small,
                 "--oracle-values": st.sampled_from(["root_mean", "best_response", "x"]), "--no-mode-a": None,
                 "--json": None, "--no-progress": None,
                 "--policy-out": st.sampled_from(["e.json", "e.npz", "e.csv", "missing/e.json"]),
                 "--config": st.sampled_from(["good.yaml", "bad.yaml", "garbage.yaml", "missing.yaml"])},
        "games": {"--json": None},
        "train": {"--resume": st.sampled_from(["missing_run", ".", "w.bin"]), "--json": None},
    }.get(command, {"--help": None})
    for flag in draw(st.lists(st.sampled_from(sorted(flags)), max_size=5, unique=True)):
        args.append(flag)
        if flags[flag] is not None:
            args.append(draw(flags[flag]))
    if command == "train":  # always a config with an unknown key (a valid one would start training)
        args.append(draw(st.sampled_from(["bad.yaml", "garbage.yaml", "missing.yaml", "trainer.lrr=1"])))
    args += draw(OVERRIDES)
    if command == "eval":  # cheap unless the fuzzed flags said otherwise (later flags win)
        for flag, value in (("--iters", "2"), ("--repeats", "1"), ("--depth", "1"), ("--oracle-iters", "2")):
            if flag not in args:
                args += [flag, value]
    if command in ("solve", "eval") and "--dice" not in args:
        args += ["--dice", "1"]
    return [str(tmp / a) if a.endswith((".yaml", ".bin", ".json", ".npz", ".txt", ".csv")) and "=" not in a else a
            for a in args]


def cli_files(tmp: Path) -> Path:
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
    other = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    (tmp / "w.bin").write_bytes(random_weights(game.query_size, game.num_hands, hidden=8, layers=1))
    (tmp / "w_other.bin").write_bytes(random_weights(other.query_size, other.num_hands, hidden=8, layers=1))
    (tmp / "broken.bin").write_bytes(random_weights(game.query_size, game.num_hands, hidden=8, layers=1)[:-9])
    (tmp / "good.yaml").write_text("game:\n  name: liars_dice\n  num_dice: 1\n  num_faces: 3\n")
    (tmp / "bad.yaml").write_text("game:\n  name: liars_dice\n  num_sides: 3\ntrainer:\n  lrr: 1\n")
    (tmp / "garbage.yaml").write_text("a: [\n\t::")
    return tmp


def run_main(argv: List[str]) -> tuple:
    """rebel.cli.main in this process: (exit status, stdout, stderr)."""
    from rebel.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), hang_guard():
        try:
            status = main(argv)
        except SystemExit as e:  # argparse: --help, --version, usage errors
            status = e.code if isinstance(e.code, int) else 2
    return status, out.getvalue(), err.getvalue()


@fuzz_settings(150)
@given(data=st.data())
def test_cli_in_process_exits_0_or_2(data, tmp_path_factory):
    tmp = cli_files(tmp_path_factory.mktemp("cli"))
    argv = data.draw(cli_arguments(tmp), label="argv")
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        status, out, err = run_main(argv)
    finally:
        os.chdir(cwd)
    assert status in (0, 2), f"rebel {' '.join(argv)} exited {status}: {err[-800:]}"
    assert "Traceback" not in err
    if status == 2 and argv and argv[0] in ("solve", "eval", "train", "games"):
        assert err.strip().splitlines()[-1].startswith(("rebel", "usage")), err


def run_subprocess_cases(data, tmp_path_factory) -> None:
    tmp = cli_files(tmp_path_factory.mktemp("cli"))
    argv = data.draw(cli_arguments(tmp), label="argv")
    assume(all("\x00" not in a and a.encode("utf-8", "surrogatepass") == a.encode("utf-8", "ignore") for a in argv))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO_ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.run([sys.executable, "-m", "rebel", *argv], capture_output=True, text=True,
                          timeout=CASE_TIMEOUT_S, env=env, cwd=tmp)
    assert proc.returncode in (0, 2), f"rebel {' '.join(argv)} exited {proc.returncode}: {proc.stderr[-800:]}"
    assert "Traceback" not in proc.stderr, proc.stderr


@fuzz_settings(30)
@given(data=st.data())
def test_cli_subprocess_exits_0_or_2(data, tmp_path_factory):
    run_subprocess_cases(data, tmp_path_factory)


@pytest.mark.slow
@fuzz_settings(150)
@given(data=st.data())
def test_cli_subprocess_exits_0_or_2_more_cases(data, tmp_path_factory):
    run_subprocess_cases(data, tmp_path_factory)
