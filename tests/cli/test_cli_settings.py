"""The settings a user gives reach the computation, or are refused in one line: game.*
overrides act the same with or without --game and are validated; a mistyped key names the
closest one; a policy file's format is read from its content; the Python API's defaults are
the CLI's; a wrong call of an array function names types, not the array."""
from __future__ import annotations

import json
import shutil

import pytest

import rebel
from tests.conftest import run_cli


def _json(*args: str) -> dict:
    r = run_cli(*args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("command", ["solve", "eval"])
def test_game_overrides_act_the_same_with_or_without_game(command):
    extra = ["--iters", "4", "--no-progress"] + (["--net", "zero", "--repeats", "1", "--no-mode-a", "--depth", "2"]
                                if command == "eval" else [])
    with_flag = _json(command, "--game", "leduc_nolimit", "game.stack=900", "game.fold_without_bet=1", *extra)
    without = _json(command, "game.name=leduc_nolimit", "game.stack=900", "game.fold_without_bet=1", *extra)
    assert with_flag["game"] == without["game"]
    assert with_flag["game"]["stack"] == 900 and with_flag["game"]["fold_without_bet"] == 1
    assert with_flag["exploitability" if command == "solve" else "mode_b"] == \
        without["exploitability" if command == "solve" else "mode_b"]


@pytest.mark.parametrize("args, message", [
    (["--game", "leduc_nolimit", "game.stack=2"], "stack must exceed the ante, got stack 2 <= ante 100"),
    (["--game", "leduc_nolimit", "--stack", "2"], "stack must exceed the ante, got stack 2 <= ante 100"),
    (["--game", "kuhn", "game.stack=900"], "unknown config key 'game.stack' for game 'kuhn'"),
    (["--game", "kuhn", "game.name=leduc"], "--game kuhn and the override game.name=leduc disagree"),
])
def test_bad_game_settings_exit_2_in_one_line(args, message):
    r = run_cli("solve", *args, "--iters", "4")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr


def test_a_mistyped_key_names_the_closest_one_not_every_key():
    r = run_cli("train", "leduc", "trainer.lrr=1")
    assert r.returncode == 2 and "did you mean 'trainer.lr'?" in r.stderr, r.stderr
    assert len(r.stderr) < 200
    r = run_cli("solve", "solver.xyzzy=1")  # nothing close: the keys of its section only
    assert r.returncode == 2 and "the keys of 'solver': " in r.stderr and "output" not in r.stderr.split(":")[-1]


def test_a_policy_file_format_is_read_from_its_content(tmp_path):
    policy = tmp_path / "p.json"
    assert run_cli("solve", "--game", "kuhn", "--iters", "64", "--policy-out", str(policy),
                   "--no-progress").returncode == 0
    misnamed = tmp_path / "p.npz"
    shutil.copy(policy, misnamed)
    assert _json("score", str(misnamed))["exploitability"] == _json("score", str(policy))["exploitability"]
    junk = tmp_path / "log.json"
    junk.write_text("hello\n")
    r = run_cli("score", str(junk))
    assert r.returncode == 2 and "neither a JSON policy nor an .npz archive" in r.stderr, r.stderr


def test_build_tree_defaults_are_the_clis():
    leduc = rebel.make_game("leduc", {})
    # a depth-limited subgame ends after the board deal, as `rebel eval` and self-play build it
    assert len(rebel.build_tree(leduc, [], 10).pseudo_leaves) > 0
    assert rebel.build_tree(leduc, [], 10).size == rebel.build_tree(leduc, [], 10, "after_deal").size == 45
    assert rebel.build_tree(leduc, [], 10, chance_leaves=False).size == 465
    assert rebel.build_tree(leduc).size == 465  # the whole game: no leaves at the deal
    assert len(rebel.build_tree(leduc).pseudo_leaves) == 0


def test_a_wrong_call_names_argument_types_not_the_array():
    leduc = rebel.make_game("leduc", {})
    policy = rebel.uniform_policy(leduc, rebel.build_tree(leduc))
    with pytest.raises(TypeError) as e:
        rebel.exploitability(leduc, policy)  # the tree is missing
    message = str(e.value)
    assert "Invoked with: Game, ndarray float64 (465, 6)" in message and len(message) < 400
