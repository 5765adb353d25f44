"""`rebel solve --spot` with per-hand JSON (--export-json, --node), node locking (--lock,
--lock-file) and the strategy grid (--grid-png); bad lines, lock syntax and hand names exit 2
with one line before any solving."""
from __future__ import annotations

import json
import struct

import pytest
from conftest import run_cli
from helpers.holdem_spots import CLAIRVOYANCE, write_spot


@pytest.fixture
def spot(tmp_path):
    return str(write_spot(tmp_path, CLAIRVOYANCE))


def test_export_json_of_the_root_and_its_children(spot, tmp_path) -> None:
    out = tmp_path / "r.json"
    r = run_cli("solve", "--spot", spot, "--iters", "2000", "--export-json", str(out), "--node", "",
                "--node", "check", "--node", "bet 100")
    assert r.returncode == 0, r.stderr
    assert f"export_json     {out} (3 nodes)" in r.stdout
    doc = json.loads(out.read_text())
    assert [n["line"] for n in doc["nodes"]] == [[], ["check"], ["bet 100"]]
    assert doc["spot"]["pot"] == 100 and doc["solve"]["iterations"] == 2000
    root = doc["nodes"][0]
    assert root["oop"]["hands"] == ["5d3h", "KdKc"]
    assert root["oop"]["strategy"]["bet 100"] == pytest.approx([0.5, 1.0], abs=0.01)
    assert root["oop"]["ev"] == pytest.approx([-50.0, 100.0], abs=0.2)
    assert doc["nodes"][2]["frequencies"]["call"] == pytest.approx(0.5, abs=0.02)
    default = tmp_path / "root.json"
    assert run_cli("solve", "--spot", spot, "--iters", "50", "--export-json", str(default), "--json").returncode == 0
    assert [n["line"] for n in json.loads(default.read_text())["nodes"]] == [[]]


def test_grid_png(spot, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "g.png"
    r = run_cli("solve", "--spot", spot, "--iters", "200", "--grid-png", str(out), "--node", "bet 100")
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1000, 1100)


def test_lock_measures_the_rest_and_keeps_the_locked_frequencies(spot, tmp_path) -> None:
    out = tmp_path / "l.json"
    r = run_cli("solve", "--spot", spot, "--iters", "1000", "--lock", "bet 100=call", "--export-json", str(out),
                "--node", "bet 100", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["exploitability"] < 0.05 and summary["values"][0] == pytest.approx(50.0, abs=0.05)
    assert summary["locked"] == ["bet 100"] and summary["locked_nodes"] == 1
    doc = json.loads(out.read_text())
    assert doc["locked"] == ["bet 100"] and doc["nodes"][0]["ip"]["strategy"] == {"fold": [0.0], "call": [1.0]}


def test_a_lock_file_by_hand_solves_before_and_after_locking(spot, tmp_path) -> None:
    locks = tmp_path / "locks.yaml"
    locks.write_text('locks:\n  - line: ""\n    strategy: {"53": check}\n')
    r = run_cli("solve", "--spot", spot, "--iters", "500", "--target", "0.1", "--lock-file", str(locks))
    assert r.returncode == 0, r.stderr
    assert "before locking" in r.stdout and "locked          1 node: (root)" in r.stdout
    assert "(of the rest of the game: locked nodes keep their strategy)" in r.stdout


@pytest.mark.parametrize("args, message", [
    (["--node", "bet 99"], "--node: line 'bet 99': step 1 'bet 99' is not an action after the root; choices: "
                           "actions check, bet 100"),
    (["--lock", "bet 100"], "--lock: lock 'bet 100' must be LINE=ACTION:FREQ,..."),
    (["--lock", "bet 100=call:0.5"], "--lock: lock 'bet 100': frequencies sum to 0.5, not 1"),
    (["--lock", "bet 100=raise"], "'raise' is not an action here (actions: fold, call)"),
    (["--lock-file", "LOCKS"], "--lock-file: lock '(root)': 'KZo' is neither an action here (actions: check, "
                               "bet 100) nor a hand group ("),
    (["--lock-file", "/no/locks.yaml"], "--lock-file: lock file '/no/locks.yaml' not found"),
    (["--export-json", "out.txt"], "out.txt' must end in .json"),
    (["--grid-png", "g.png", "--node", "", "--node", "check"], "--grid-png draws one node"),
    (["--grid-png", "g.png", "--node", "check, check"], "is a showdown node"),
])
def test_bad_input_exits_2_with_one_line(spot, tmp_path, args, message) -> None:
    locks = tmp_path / "locks.yaml"
    locks.write_text('locks:\n  - line: ""\n    strategy: {"KZo": check}\n')
    args = [str(locks) if a == "LOCKS" else str(tmp_path / a) if a in ("out.txt", "g.png") else a for a in args]
    r = run_cli("solve", "--spot", spot, *args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert "exploitability" not in r.stdout  # refused before solving


def test_spot_flags_need_a_spot() -> None:
    for flag, value in (("--lock", "x=call"), ("--node", "check"), ("--export-json", "x.json"), ("--grid-png", "x.png"),
                        ("--lock-file", "x.yaml")):
        r = run_cli("solve", "--game", "kuhn", flag, value)
        assert r.returncode == 2 and f"{flag} applies to --spot only" in r.stderr
