"""`rebel score` (saved policies scored exactly) and progress reports on every long phase."""
from __future__ import annotations

import io
import json

import pytest
from conftest import kuhn, liars_dice, run_cli, solved

import rebel
from rebel.cli import main
from rebel.search.evaluate import evaluate
from rebel.search.settings import EvalSettings
from rebel.util.progress import Progress


@pytest.mark.parametrize("game_flags, suffix", [
    (["--game", "kuhn"], ".json"),
    (["--dice", "1", "--faces", "4"], ".npz"),
    (["--dice", "1", "--faces", "3"], ".json"),
])
def test_score_round_trips_solve_policy_out(game_flags, suffix, tmp_path, capsys):
    path = str(tmp_path / f"p{suffix}")
    assert main(["solve", *game_flags, "--solver", "dcfr", "--iters", "200", "--json", "--policy-out", path]) == 0
    solve_report = json.loads(capsys.readouterr().out)
    assert main(["score", path, "--json"]) == 0
    score_report = json.loads(capsys.readouterr().out)
    assert score_report["game"] == solve_report["game"]
    for key in ("exploitability", "game_value"):
        assert abs(score_report[key] - solve_report[key]) <= 1e-12
    assert all(abs(a - b) <= 1e-12 for a, b in zip(score_report["br_values"], solve_report["br_values"]))


def test_score_round_trips_eval_policy_out(tmp_path, capsys):
    path = str(tmp_path / "mode_b.json")
    assert main(["eval", "--game", "kuhn", "--iters", "64", "--repeats", "4", "--threads", "1", "--no-mode-a",
                 "--json", "--policy-out", path]) == 0
    eval_report = json.loads(capsys.readouterr().out)
    assert main(["score", path, "--json"]) == 0
    score_report = json.loads(capsys.readouterr().out)
    assert abs(score_report["exploitability"] - eval_report["mode_b"][-1]["exploitability"]) <= 1e-12


def test_score_known_values(tmp_path):
    """The uniform policy of 1x4f is 0.655059523810 exploitable (README); Kuhn's CFR+ policy
    reaches the game value -1/18."""
    uniform = tmp_path / "uniform.npz"
    game = liars_dice(1, 4)
    tree = rebel.build_tree(game)
    rebel.save_policy(uniform, game, rebel.uniform_policy(game, tree), tree)
    proc = run_cli("score", str(uniform))
    assert proc.returncode == 0, proc.stderr
    rows = dict(line.split(None, 1) for line in proc.stdout.strip().splitlines())
    assert rows["game"] == "liars_dice(num_dice=1, num_faces=4)"
    assert abs(float(rows["exploitability"]) - 0.655059523810) < 1e-9
    k = solved(kuhn(), "cfr+", 2000)
    path = tmp_path / "kuhn.json"
    rebel.save_policy(path, kuhn(), k.policy, k.tree)
    proc = run_cli("score", str(path), "--json")
    report = json.loads(proc.stdout)
    assert report["exploitability"] == k.exploitability
    assert abs(report["game_value"] + 1 / 18) < 1e-3


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "missing.json", "is not a file"),
    (lambda d: d / "p.txt", "must end in .json or .npz"),
    (lambda d: _write(d / "bad.json", "{\"game\": {\"name\": \"kuhn\"}, \"policy\": {}}"), "decision points missing"),
    (lambda d: _write(d / "trunc.json", "{\"game\": "), "not valid JSON"),
    (lambda d: _write(d / "bad.npz", "not a zip"), "neither a JSON policy nor an .npz archive"),
        (lambda d: _write(d / "trunc.npz", "PK\x03\x04 cut"), "not a readable .npz archive"),
])
def test_score_bad_files_exit_2(make, message, tmp_path):
    path = make(tmp_path)
    proc = run_cli("score", str(path))
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rebel score: error: ") and message in lines[0], proc.stderr


def _write(path, text):
    path.write_text(text)
    return path


def test_score_needs_no_torch(tmp_path):
    """solve, eval and score run without torch (it is needed for training only)."""
    path = tmp_path / "k.json"
    code = ("import sys; sys.modules['torch'] = None\n"
            "from rebel.cli import main\n"
            f"assert main(['solve', '--game', 'kuhn', '--iters', '64', '--policy-out', {str(path)!r}]) == 0\n"
            f"assert main(['score', {str(path)!r}]) == 0\n"
            "assert main(['eval', '--game', 'kuhn', '--iters', '16', '--repeats', '1', '--threads', '1']) == 0\n")
    import subprocess
    import sys

    from conftest import REPO_ROOT
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr


# ------------------------------------------------------------------------- progress


def test_progress_lines_off_a_terminal(monkeypatch):
    clock = iter([0.0, 1.0, 3.0, 10.0, 40.0, 45.0, 80.0])
    monkeypatch.setattr("rebel.util.progress.time.perf_counter", lambda: next(clock))
    out = io.StringIO()
    p = Progress("mode (b) sampled policies", 100, "policies", stream=out, terminal=False, after=2.0, every=30.0)
    for done in (1, 5, 10, 40, 45, 80):  # at 1, 3, 10, 40, 45, 80 s
        p(done)
    assert out.getvalue().splitlines() == [
        "rebel: mode (b) sampled policies: 5/100 policies (5%), 3 s elapsed, about 57 s left",
        "rebel: mode (b) sampled policies: 40/100 policies (40%), 40 s elapsed, about 60 s left",
        "rebel: mode (b) sampled policies: 80/100 policies (80%), 80 s elapsed, about 20 s left",
    ]


def test_progress_disabled_prints_nothing():
    out = io.StringIO()
    p = Progress("x", 10, stream=out, terminal=False, after=0.0, enabled=False)
    p(5)
    assert out.getvalue() == ""


def test_every_eval_phase_reports_progress():
    """Full game, mode (a) (subgames solved, the oracle's work inside them) and mode (b)
    each report progress up to their totals."""
    seen: dict[str, list[tuple[int, int]]] = {}
    settings = EvalSettings(net="oracle", iterations=20000, repeats=3, threads=1,
                            oracle_iterations=2000)
    result = evaluate(rebel.make_game("kuhn", {}), settings,
                      on_phase=lambda phase, done, total: seen.setdefault(phase, []).append((done, total)))
    assert set(seen) == {"full_game", "mode_a", "mode_b"}
    assert seen["full_game"][-1] == (20000, 20000)
    assert seen["mode_a"][-1] == (result["search_roots"], result["search_roots"]) == (2, 2)
    assert seen["mode_b"][-1] == (3, 3)
    for calls in seen.values():
        assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_progress_of_a_resumed_phase_counts_from_its_start(monkeypatch):
    """A phase resumed at `initial` (training from a checkpoint) estimates the time left from
    the steps done since it started, not from the total."""
    clock = iter([0.0, 10.0, 40.0])
    monkeypatch.setattr("rebel.util.progress.time.perf_counter", lambda: next(clock))
    out = io.StringIO()
    p = Progress("training", 100, "epoch", stream=out, terminal=False, after=0.0, initial=60)
    p.set_postfix({"loss": "0.01"})  # drawn on a bar; lines leave it out
    p(61)  # at 10 s
    p(80)  # at 40 s
    assert out.getvalue().splitlines() == [
        "rebel: training: 61/100 epoch (61%), 10 s elapsed, about 390 s left",
        "rebel: training: 80/100 epoch (80%), 40 s elapsed, about 40 s left",
    ]
    assert not p.shows_bar
