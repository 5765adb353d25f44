"""The command line on Leduc hold'em: ``rebel solve`` reaches the known value and writes a
policy ``rebel score`` scores the same; game flags and bad input."""
from __future__ import annotations

import json

from conftest import run_cli

LEDUC_VALUE = -0.085606424078


def test_solve_and_score_limit_leduc(tmp_path):
    out = tmp_path / "leduc.json"
    proc = run_cli("solve", "--game", "leduc", "--solver", "dcfr", "--iters", "4096", "--json", "--policy-out",
                   str(out))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["game"] == {"name": "leduc"}
    assert report["exploitability"] < 1e-4
    assert abs(report["game_value"] - LEDUC_VALUE) <= 2 * report["exploitability"]
    scored = run_cli("score", str(out), "--json")
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["exploitability"] == report["exploitability"]


def test_nolimit_flags_reach_the_game():
    proc = run_cli("solve", "--game", "leduc_nolimit", "--stack", "900", "--ante", "100", "--iters", "64", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["game"] == {"name": "leduc_nolimit", "stack": 900, "ante": 100}


def test_bad_leduc_input_exits_2():
    flag = run_cli("solve", "--game", "leduc", "--stack", "900")
    assert flag.returncode == 2 and "--stack does not apply to leduc" in flag.stderr
    stack = run_cli("solve", "--game", "leduc_nolimit", "--stack", "50")
    assert stack.returncode == 2 and "stack must exceed the ante" in stack.stderr


def test_eval_subgames_ending_at_the_deal():
    """``--chance-leaves at_deal``: Leduc's search ends each subgame at the deal (6 search
    roots instead of 31), the report says so; an unknown choice exits 2 naming the key."""
    proc = run_cli("eval", "--game", "leduc", "--depth", "10", "--net", "oracle", "--iters", "16", "--repeats", "2",
                   "--no-mode-a", "--chance-leaves", "at_deal", "search.full_game=false", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["chance_leaves"] == "at_deal" and report["search_roots"] == 6
    text = run_cli("eval", "--game", "leduc", "--depth", "10", "--net", "oracle", "--iters", "16", "--repeats", "2",
                   "--no-mode-a", "--chance-leaves", "at_deal", "search.full_game=false")
    assert text.returncode == 0 and "subgames end    at deal" in text.stdout
    bad = run_cli("eval", "--game", "leduc", "search.chance_leaves=before")
    assert bad.returncode == 2 and "search.chance_leaves" in bad.stderr and "after_deal" in bad.stderr


def test_play_refuses_bad_chips_as_solve_does():
    """``rebel play`` takes --stack and --ante, checked as ``rebel solve`` checks them: the same message."""
    for flags in (["--game", "leduc", "--stack", "900"], ["--game", "leduc_nolimit", "--stack", "50"],
                  ["--game", "leduc_nolimit", "--ante", "0"], ["--game", "liars_dice", "--ante", "10"]):
        solve, play = run_cli("solve", *flags), run_cli("play", *flags)
        assert solve.returncode == play.returncode == 2, (flags, solve.stderr, play.stderr)
        message = solve.stderr.strip().splitlines()[-1].split("error: ")[-1]
        assert message and message in play.stderr, (flags, solve.stderr, play.stderr)
