"""The experiment scripts run and reproduce their documented figures on small settings."""
from __future__ import annotations

import json
import re

import pytest
from helpers.scripts import EXPERIMENTS, load


def test_full_game_table_reproduces_paper_row(tmp_path, capsys):
    table = load("full_game_table")
    out = tmp_path / "table.json"
    assert table.main(["--games", "1x4f", "--solvers", "lcfr", "lfp", "--out", str(out)]) == 0
    rows = {r["solver"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["lcfr"]["exploitability"] < 0.0015
    assert rows["lfp"]["exploitability"] < 0.012 * 1.05
    assert rows["lcfr"]["value_error"] < 1e-3
    assert "| 1x4f | lcfr |" in capsys.readouterr().out


def test_mode_a_variants_on_kuhn(tmp_path):
    variants = load("mode_a_variants")
    out = tmp_path / "variants.json"
    assert variants.main(["--depths", "2", "--repeats", "256", "--out", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    # Documented in docs/algorithm_map.md: the safe protocol is near an equilibrium, the
    # average-policy variants are not.
    assert row["sampled"]["256"] <= 0.005
    assert row["to_leaf"] == pytest.approx(0.0424, abs=5e-4)
    assert row["root_only"] == pytest.approx(0.1255, abs=5e-4)


def test_bad_arguments_are_refused():
    with pytest.raises(SystemExit):
        load("full_game_table").main(["--iters", "0"])
    with pytest.raises(SystemExit):
        load("mode_a_variants").main(["--depths", "0"])
    with pytest.raises(SystemExit):
        load("cfrd_rate").main(["--iters", "0"])
    with pytest.raises(SystemExit):
        load("cfrd_rate").main(["--depth", "0"])
    with pytest.raises(SystemExit):
        load("cfrd_rate").main(["--root-solver", "fp"])


def test_cfrd_rate_on_1x3f_matches_the_unlimited_tree(tmp_path):
    rate = load("cfrd_rate")
    out = tmp_path / "rate.json"
    assert rate.main(["--faces", "3", "--iters", "64", "256", "--leaf-iters", "256", "--out", str(out)]) == 0
    rows = {r["iterations"]: r for r in json.loads(out.read_text())["rows"]}
    # On 1x3f CFR-D with oracle leaf values converges as fast as LCFR on the whole tree.
    assert rows[64]["depth_limited"]["exploitability"] == pytest.approx(0.00950, abs=5e-5)
    assert rows[64]["no_depth_limit"]["exploitability"] == pytest.approx(0.00584, abs=5e-5)
    assert rows[256]["depth_limited"]["exploitability"] == pytest.approx(0.00062, abs=5e-5)
    assert rows[256]["no_depth_limit"]["exploitability"] == pytest.approx(0.00085, abs=5e-5)


def test_cfrd_rate_on_1x4f_shows_the_depth_limit_gap(tmp_path):
    # The figure docs/algorithm_map.md and the README quote: with leaf values consistent with
    # the play below, the depth-limited root still sits an order of magnitude above the
    # unlimited tree at T = 1024.
    rate = load("cfrd_rate")
    out = tmp_path / "rate.json"
    assert rate.main(["--iters", "1024", "--out", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert row["depth_limited"]["exploitability"] == pytest.approx(0.01163, abs=5e-5)
    assert row["no_depth_limit"]["exploitability"] == pytest.approx(0.00091, abs=5e-5)
    br0, br1 = row["depth_limited"]["br_values"]
    assert br1 + 1 / 16 > 5 * (br0 - 1 / 16)  # player 0's side is the exploitable one


def test_cfrd_rate_gap_is_not_the_root_solver(tmp_path):
    # A DCFR root (iterates mixed with DCFR's (m + 1)^2 weights) sits near linear CFR's 0.0116
    # at the depth limit, while the same solver on the unlimited tree is 180 times lower: the
    # gap belongs to the depth limit, not to the root solver.
    rate = load("cfrd_rate")
    out = tmp_path / "rate.json"
    assert rate.main(["--iters", "1024", "--root-solver", "dcfr", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["root_solver"] == "dcfr"
    (row,) = report["rows"]
    assert row["depth_limited"]["exploitability"] == pytest.approx(0.00892, abs=5e-5)
    assert row["no_depth_limit"]["exploitability"] == pytest.approx(0.0000485, abs=5e-6)


def test_full_game_table_compares_off_path_modes(tmp_path, capsys):
    table = load("full_game_table")
    out = tmp_path / "table.json"
    assert table.main(["--games", "1x4f", "--solvers", "lcfr", "lfp", "--iters", "128",
                       "--off-path", "skip", "floor", "conditional", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [(r["solver"], r["off_path"]) for r in rows] == [
        ("lcfr", "skip"), ("lcfr", "floor"), ("lcfr", "conditional"), ("lfp", None)]
    import rebel

    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
    for r in rows[:3]:
        assert r["exploitability"] == rebel.solve(game, "lcfr", 128, off_path=r["off_path"],
                                                  progress=False).exploitability
    printed = capsys.readouterr().out
    assert "| game | solver | skip | floor | conditional |" in printed and "| 1x4f | lfp | - |" in printed


def test_off_path_search_runs_every_mode(tmp_path, capsys):
    search = load("off_path_search")
    out = tmp_path / "search.json"
    assert search.main(["--faces", "3", "--iters", "16", "--nets", "zero", "oracle", "--oracle-iters", "16",
                        "--repeats", "4", "--threads", "1", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [(r["net"], r["off_path"]) for r in rows] == [
        (n, m) for n in ("zero", "oracle") for m in ("skip", "floor", "conditional")]
    zero = [r for r in rows if r["net"] == "zero"]
    assert len({r["mode_a"] for r in zero}) == 1  # leaf values 0: nothing at stake off path
    assert list(rows[0]["mode_b"]) == ["1", "2", "4"]
    assert "| oracle | floor |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        search.main(["--repeats", "0"])


def test_cfrd_rate_takes_the_off_path_mode(tmp_path):
    rate = load("cfrd_rate")
    out = tmp_path / "rate.json"
    assert rate.main(["--faces", "3", "--iters", "32", "--leaf-iters", "32", "--off-path", "floor",
                      "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["off_path"] == "floor"
    assert 0 < report["rows"][0]["depth_limited"]["exploitability"] < 0.2


RESULTS_1X4F = EXPERIMENTS / "results" / "training_curve" / "1x4f-60min"


def test_training_curve_of_the_committed_1x4f_run(tmp_path, capsys):
    curve = load("training_curve")
    out = tmp_path / "curve.png"
    assert curve.main([str(RESULTS_1X4F), "--oracle", "0.0165", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| 22.9 | 50 | 326,400 | 0.0167 |" in text and "| 59.7 | 120 | 774,400 | 0.0168 |" in text
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_heldout_gap_separates_target_and_net_error(tmp_path):
    gap = load("heldout_gap")
    out = tmp_path / "gap.json"
    assert gap.main([str(RESULTS_1X4F), "--samples", "4", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["heldout_pbs"] == 251  # the 502 held-out rows of the run, two per PBS
    # CFR-D with exact leaf values reproduces the oracle labels closely; the net does not.
    assert report["mean_abs_cfrd_oracle_leaves_target_minus_label"] < 0.01
    assert report["mean_abs_net_minus_label"] > 0.02


def test_table2_quick_pipeline(tmp_path, capsys):
    """experiments/table2.py --quick: trains, evaluates and tabulates 1x3f and Kuhn with both
    solvers; a second call reuses every finished cell; bad input exits 2 with one line."""
    table2 = load("table2")
    out = tmp_path / "t2"
    assert table2.main(["--quick", "--out", str(out), "--no-progress"]) == 0
    summary = json.loads((out / "table2.json").read_text())
    assert list(summary["cells"]) == ["1x3f-cfr", "1x3f-fp", "kuhn-cfr", "kuhn-fp"]
    refs = summary["references"]
    # Known values: full-game linear CFR on 1x3f after 256 iterations (configs/quick.yaml),
    # and exact leaf values (oracle) make the search far better than a net answering zero.
    assert refs["1x3f"]["full_lcfr"] == pytest.approx(0.00084, abs=5e-5)
    for game in ("1x3f", "kuhn"):
        assert refs[game]["full_lcfr"] < 0.01 and refs[game]["full_lfp"] < 0.05
        assert refs[game]["oracle"] < refs[game]["zero"] / 4
        # The zero net under each stronger search: what that search does without learned values.
        assert 0 <= refs[game]["zero_dcfr_T512_d2"] and 0 <= refs[game]["zero_lcfr_T256_d4"]
    for name, cell in summary["cells"].items():
        assert cell["seeds"] == [0, 1, 2]
        assert 0 <= cell["min"] <= cell["mean"] <= cell["max"] < 1.0
        assert cell["epochs"] == 14 and cell["examples_generated"] > 0
        assert (out / name / "weights.bin").is_file() and (out / name / "eval.json").is_file()
        game = name.rsplit("-", 1)[0]
        assert cell["mean"] < refs[game]["zero"]  # 14 small epochs already beat the zero net (by 2.5-300x here)
        # The stronger-search rows: the same net, DCFR with 2x the iterations and LCFR twice as
        # deep (quick settings).
        assert [x["protocol"] for x in cell["stronger"]] == [
            {"mode": "b", "depth": 2, "iterations": 512, "repeats": 16, "solver": "dcfr", "precision": "fp32"},
            {"mode": "b", "depth": 4, "iterations": 256, "repeats": 16, "solver": "lcfr", "precision": "fp32"}]
        for x in cell["stronger"]:  # (a search this strong can solve these tiny games to rounding: -1.4e-17 seen)
            assert -1e-12 <= x["min"] <= x["mean"] <= x["max"] < refs[game]["zero"]
    # Seed 0 is the training run's own final evaluation (same protocol), not computed twice;
    # evaluated afresh it gives the same number to the last digit.
    from rebel import _core
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings

    for name in summary["cells"]:
        runs = json.loads((out / name / "eval.json").read_text())["runs"]
        assert runs[0]["source"].startswith("metrics.jsonl") and all("source" not in r for r in runs[1:])
        final = [json.loads(line) for line in (out / name / "metrics.jsonl").read_text().splitlines()][-1]
        assert runs[0]["exploitability"] == final["evaluation"]["exploitability"]
        assert runs[0]["net_kernel"]["precision"] == final["evaluation"]["eval_precision"] == "fp32"
    from rebel.config.train import load_train_config

    config = load_train_config(str(out / "1x3f-fp" / "config.yaml"))
    # 1x3f self-played with the default kernel (auto) and was evaluated in fp32 all the same.
    assert (config.search.precision, config.evaluation.precision) == ("auto", "fp32")
    again = evaluate(_core.make_game("liars_dice", {"num_dice": 1, "num_faces": 3}),
                     EvalSettings(net=str(out / "1x3f-fp" / "weights.bin"), solver="lfp", depth=2, iterations=256,
                                  repeats=16, threads=2, seed=0, off_path=config.search.off_path,
                                  precision=config.evaluation.precision, mode_a=False, full_game=False), progress=False)
    fp_runs = json.loads((out / "1x3f-fp" / "eval.json").read_text())["runs"]
    assert again["mode_b"][-1]["exploitability"] == fp_runs[0]["exploitability"]

    md = (out / "table2.md").read_text()
    assert "ours: ReBeL with CFR-D" in md and "exact leaf values (oracle net)" in md
    assert "ours, stronger search (DCFR, T = 512, depth 2): the CFR-D net" in md
    assert "ours, stronger search (LCFR, T = 256, depth 4): the FP net" in md
    assert "zero net, stronger search (LCFR, T = 256, depth 4), seed 0" in md
    for game in ("1x3f", "kuhn"):
        assert (out / f"curves_{game}.png").stat().st_size > 10_000
    capsys.readouterr()

    # --set reaches the runs trained now (and is recorded in their config).
    assert table2.main(["--quick", "--out", str(out), "--force", "kuhn-fp", "--cells", "kuhn-fp",
                        "--set", "trainer.lr=0.0007", "--no-progress"]) == 0
    assert "lr: 0.0007" in (out / "kuhn-fp" / "config.yaml").read_text()
    capsys.readouterr()

    # Cached: nothing is retrained or re-evaluated.
    stamps = {p: p.stat().st_mtime_ns for p in out.glob("*/metrics.jsonl")}
    assert table2.main(["--quick", "--out", str(out), "--cells", "kuhn-fp", "--no-progress"]) == 0
    assert stamps == {p: p.stat().st_mtime_ns for p in out.glob("*/metrics.jsonl")}
    assert list(json.loads((out / "table2.json").read_text())["cells"]) == list(summary["cells"])

    # Bad input: one line, exit 2, nothing finished deleted.
    assert table2.main(["--quick", "--out", str(out), "--cells", "9x9f-cfr"]) == 2
    assert "no config for game '9x9f'" in capsys.readouterr().err
    assert table2.main(["--quick", "--out", str(out), "--cells", "kuhn-xx"]) == 2
    assert table2.main(["--quick", "--out", str(out), "--cells", "kuhn-fp", "--stronger", "dcfr:4096"]) == 2
    assert "--stronger must be SOLVER:T:DEPTH" in capsys.readouterr().err
    assert table2.main(["--quick", "--out", str(out), "--cells", "kuhn-fp", "--set", "oops"]) == 2
    assert "--set takes KEY=VALUE" in capsys.readouterr().err
    # A results folder from before the per-search file names is renamed, not re-evaluated.
    old = out / "kuhn-fp" / "eval_dcfr_T512_d2.json"
    old.rename(out / "kuhn-fp" / "eval_stronger.json")
    assert table2.main(["--quick", "--out", str(out), "--cells", "kuhn-fp", "--no-progress"]) == 0
    assert old.is_file() and not (out / "kuhn-fp" / "eval_stronger.json").exists()
    capsys.readouterr()
    # A cached evaluation that holds another search than its name says is not silently reused.
    data = json.loads(old.read_text())
    data["protocol"]["iterations"] = 4096
    old.write_text(json.dumps(data))
    assert table2.main(["--quick", "--out", str(out), "--cells", "kuhn-fp"]) == 2
    assert "evaluated with another search" in capsys.readouterr().err
    old.write_text(json.dumps({**data, "protocol": {**data["protocol"], "iterations": 512}}))
    (out / "kuhn-fp" / "eval.json").write_text('{"format": 0}')
    assert table2.main(["--quick", "--out", str(out), "--cells", "kuhn-fp", "--no-progress"]) == 2
    assert "written by another version of table2.py" in capsys.readouterr().err
    (out / "kuhn-fp" / "eval.json").write_text("{not json")
    assert table2.main(["--quick", "--out", str(out), "--cells", "kuhn-fp", "--no-progress"]) == 2
    assert "corrupt evaluation" in capsys.readouterr().err
    assert (out / "kuhn-fp" / "weights.bin").is_file()


def test_table2_end_training_after_a_lost_checkpoint(tmp_path, capsys, monkeypatch):
    """A run whose checkpoint is gone (a replaced machine) cannot resume: the script refuses it
    until --end-training ends it at its last recorded epoch, marked as such in the results, and
    evaluates every seed afresh on the net that epoch wrote."""
    table2 = load("table2")
    out = tmp_path / "t2"
    args = ["--quick", "--out", str(out), "--cells", "kuhn-cfr", "--stronger", "none", "--oracle", "", "--no-progress"]
    assert table2.main(args) == 0
    cell = out / "kuhn-cfr"
    lines = (cell / "metrics.jsonl").read_text().splitlines()
    finished = json.loads(lines[-1])
    assert finished["kind"] == "final" and finished["epoch"] == 14
    # The run as a lost machine leaves it: killed after epoch 12, checkpoint and evaluation gone.
    epoch12 = next(i for i, line in enumerate(lines) if json.loads(line).get("epoch") == 12)
    (cell / "metrics.jsonl").write_text("\n".join(lines[:epoch12 + 1]) + "\n")
    for name in ("checkpoint.pt", "eval.json"):
        (cell / name).unlink()
    capsys.readouterr()
    assert table2.main(args) == 2
    assert "holds a run without a checkpoint" in capsys.readouterr().err
    assert table2.main(args + ["--end-training", "kuhn-cfr"]) == 0
    final = json.loads((cell / "metrics.jsonl").read_text().splitlines()[-1])
    last = json.loads(lines[epoch12])
    assert final["kind"] == "final" and final["ended"] == table2.ENDED_WITHOUT_CHECKPOINT
    assert (final["epoch"], final["examples_generated"], final["training_seconds"]) == \
        (12, last["examples_generated"], last["training_seconds"])
    runs = json.loads((cell / "eval.json").read_text())["runs"]
    assert [r["seed"] for r in runs] == [0, 1, 2] and all("source" not in r for r in runs)
    row = json.loads((out / "table2.json").read_text())["cells"]["kuhn-cfr"]
    assert row["epochs"] == 12 and row["ended"] == table2.ENDED_WITHOUT_CHECKPOINT
    assert "kuhn-cfr [1]" in (out / "table2.md").read_text()
    # The curve's last point: eval.json's seed 0, since the ended run has no final evaluation.
    assert "evaluation" not in final and table2.final_seed0(cell, final) == runs[0]["exploitability"]
    assert (out / "curves_kuhn.png").stat().st_size > 10_000
    capsys.readouterr()
    # Once ended, the cell is finished: ending it again is refused, nothing is changed.
    assert table2.main(args + ["--end-training", "kuhn-cfr"]) == 2
    assert "already finished" in capsys.readouterr().err
    # An evaluation cached with a rounded kernel (before the protocol fixed float32) is refused
    # until --reevaluate computes it again, with the net in float32.
    data = json.loads((cell / "eval.json").read_text())
    stale = {**data, "runs": [{**r, "net_kernel": {"precision": "bf16", "isa": "avx512bf16"}} for r in data["runs"]]}
    (cell / "eval.json").write_text(json.dumps(stale))
    assert table2.main(args) == 2
    assert "evaluated with the net in bf16" in capsys.readouterr().err
    assert table2.main(args + ["--reevaluate", "kuhn-cfr"]) == 0
    again = json.loads((cell / "eval.json").read_text())
    assert again["protocol"]["precision"] == "fp32" and table2.net_precisions(again) == {"fp32"}
    assert [r["exploitability"] for r in again["runs"]] == [r["exploitability"] for r in data["runs"]]
    # An evaluation killed between seeds resumes at the seed it was on: the finished seeds are
    # kept (eval.partial.json) and not computed again; the result is the uninterrupted one.
    import rebel.search.evaluate

    real, calls = rebel.search.evaluate.evaluate, []

    def interrupted_at_second_seed(game, settings, **kw):
        calls.append(settings.seed)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(game, settings, **kw)

    (cell / "eval.json").unlink()
    monkeypatch.setattr(rebel.search.evaluate, "evaluate", interrupted_at_second_seed)
    with pytest.raises(KeyboardInterrupt):
        table2.main(args)
    assert not (cell / "eval.json").exists() and calls == [0, 1]
    kept = json.loads((cell / "eval.partial.json").read_text())
    assert [r["seed"] for r in kept["runs"]] == [0]
    calls.clear()
    monkeypatch.setattr(rebel.search.evaluate, "evaluate",
                        lambda game, settings, **kw: calls.append(settings.seed) or real(game, settings, **kw))
    assert table2.main(args) == 0
    assert calls == [1, 2] and not (cell / "eval.partial.json").exists()
    resumed = json.loads((cell / "eval.json").read_text())["runs"]
    assert [r["exploitability"] for r in resumed] == [r["exploitability"] for r in again["runs"]]
    # A partial evaluation of another protocol is refused, not mixed in.
    (cell / "eval.json").unlink()
    (cell / "eval.partial.json").write_text(json.dumps({**kept, "protocol": {**kept["protocol"], "repeats": 8}}))
    capsys.readouterr()
    assert table2.main(args) == 2
    assert "eval.partial.json: an unfinished evaluation of another protocol" in capsys.readouterr().err
    # --reevaluate drops the kept seeds of another net precision too, and computes them again.
    (cell / "eval.partial.json").write_text(json.dumps(
        {**kept, "protocol": {**kept["protocol"], "precision": "bf16"},
         "runs": [{**r, "net_kernel": {"precision": "bf16", "isa": "avx512bf16"}} for r in kept["runs"]]}))
    calls.clear()
    assert table2.main(args + ["--reevaluate", "kuhn-cfr"]) == 0
    assert calls == [0, 1, 2] and not (cell / "eval.partial.json").exists()
    assert table2.net_precisions(json.loads((cell / "eval.json").read_text())) == {"fp32"}


def test_rebel_tictactoe_target_analysis(tmp_path):
    """When a run first reached the target and from when on it stayed there (the figures
    docs/alphazero.md quotes), and the exact-leaf net answers the solver's values."""
    script = load("rebel_tictactoe")
    rows = [{"epoch": e, "wall_seconds": 60.0 * e, "examples_generated": 1000 * e, "exploitability": x}
            for e, x in [(0, 1.0), (1, 0.005), (2, 0.03), (3, 0.002), (4, 0.001)]]
    rows.insert(1, {"epoch": 1, "wall_seconds": 60.0, "examples_generated": 1000, "loss": 0.1})
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = script.target_analysis(tmp_path, 0.01)
    assert out["target"]["first"]["epoch"] == 1 and out["target"]["stayed_below_from"]["epoch"] == 3
    assert out["last_evaluation"]["exploitability"] == 0.001 and out["target"]["evaluations"] == 5

    from rebel import _core

    game = _core.make_game("mnk", {"m": 3, "n": 3, "k": 3})
    net = script.exact_leaf_net(game, 3, 3, 3)
    win_for_x = [0, 3, 1, 4]  # X to move with a line to complete
    draw = [4, 0, 8, 2, 1, 7]  # a drawn position, X to move
    for player, expected in ((0, [1.0, 0.0]), (1, [-1.0, 0.0])):
        values = _core.net_values(net, game, [win_for_x, draw], player, [1.0], [1.0])
        assert list(map(float, values[:, 0])) == expected


def test_alphazero_mnk_quick_pipeline(tmp_path, capsys):
    """Train (tiny tic-tac-toe run), final match, summary and curve; a second call neither
    retrains nor replays the match; bad arguments exit 2 before any training."""
    script = load("alphazero_mnk")
    out = tmp_path / "run"
    assert script.main(["--quick", "--out", str(out), "--no-progress"]) == 0
    result = json.loads((out / "summary.json").read_text())
    final = result["final"]["random"]
    assert final["games"] == 4 and final["wins"] + final["draws"] + final["losses"] == 4
    assert final["interval_95"][0] <= final["score"] <= final["interval_95"][1]
    assert result["training"]["epochs"] == 2 and result["training"]["games"] == 16
    assert result["training"]["inference"][0].startswith("native-")
    assert (out / "curve.png").stat().st_size > 0 and (out / "net.pt").is_file()
    metrics = (out / "metrics.jsonl").read_text()
    matches = (out / "final_match.json").read_text()
    capsys.readouterr()
    assert script.main(["--quick", "--out", str(out), "--no-progress"]) == 0
    assert (out / "metrics.jsonl").read_text() == metrics and (out / "final_match.json").read_text() == matches
    assert script.main(["alphazero_tictactoe", "--opponents", "alphago", "--out", str(tmp_path / "x")]) == 2
    assert script.main(["rebel_tictactoe", "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
    assert "unknown player 'alphago'" in capsys.readouterr().err


def test_time_to_target_applies_its_rule_to_the_snapshots(tmp_path, capsys):
    """experiments/time_to_target.py: a 1x3f run keeps its net every 4 epochs; the first
    snapshot whose 3-seed mean reads at or below the target is reported, every earlier one
    read above it, and --curve gives seed 0 of each. A second call trains nothing."""
    ttt = load("time_to_target")
    out = tmp_path / "ttt"
    args = ["--name", "q", "--config", "quick", "--set", "selfplay.threads=1", "--set", "run.epochs=20",
            "--target", "0.25", "--minutes", "10", "--snapshot-every", "4", "--repeats", "16", "--threads", "1",
            "--curve", "--no-progress", "--out", str(out)]
    assert ttt.main(args) == 0
    state = json.loads((out / "q" / "time_to_target.json").read_text())
    evals = {int(k): v for k, v in state["evaluations"].items()}
    assert sorted(evals) == [0, 4, 8, 12, 16, 20]
    assert all("0" in e["seeds"] for e in evals.values())  # --curve
    assert evals[0]["seeds"]["0"]["exploitability"] > 0.5  # the random net (1x3f zero net: 0.498)
    reached = state["reached"]
    assert reached is not None and reached["mean"] <= 0.25
    hit = evals[reached["epoch"]]
    assert sorted(hit["seeds"]) == ["0", "1", "2"]
    assert reached["mean"] == pytest.approx(sum(s["exploitability"] for s in hit["seeds"].values()) / 3)
    assert reached["training_minutes"] == pytest.approx(hit["training_seconds"] / 60)
    assert reached["training_minutes"] > 0
    for epoch, e in evals.items():
        if epoch < reached["epoch"] and e["seeds"]["0"]["exploitability"] <= 0.25:
            # seed 0 passed: every seed was read (one above the target does not stop the
            # others) and the mean missed the target
            assert sorted(e["seeds"]) == ["0", "1", "2"] and e["mean"] > 0.25, epoch
    assert "| q | quick |" in (out / "time_to_target.md").read_text()
    capsys.readouterr()

    stamp = (out / "q" / "metrics.jsonl").stat().st_mtime_ns
    assert ttt.main(args) == 0
    assert (out / "q" / "metrics.jsonl").stat().st_mtime_ns == stamp
    assert json.loads((out / "q" / "time_to_target.json").read_text())["reached"] == reached

    # A larger --minutes extends a run that stopped at its time limit (here: at run.epochs, so
    # nothing to do) and keeps the evaluations; a smaller one is refused below.
    assert ttt.main([*args, "--minutes", "20"]) == 0
    assert (out / "q" / "metrics.jsonl").stat().st_mtime_ns == stamp
    capsys.readouterr()

    # --from-run measures an existing run's snapshots the same way (here the same run).
    assert ttt.main(["--from-run", str(out / "q"), "--name", "again", "--target", "0.25", "--repeats", "16",
                     "--threads", "1", "--no-progress", "--out", str(out)]) == 0
    again = json.loads((out / "again" / "time_to_target.json").read_text())
    assert again["reached"] == reached and again["snapshot_every"] == 4 and again["run"] == str(out / "q")
    assert "| again |" in (out / "time_to_target.md").read_text()
    capsys.readouterr()

    # A run whose last epoch falls between snapshots: its final net is the last point evaluated.
    short = ["--name", "short", "--config", "quick", "--set", "selfplay.threads=1", "--set", "run.epochs=6",
             "--target", "0.01", "--minutes", "10", "--snapshot-every", "4", "--repeats", "16", "--threads", "1",
             "--no-progress", "--out", str(out)]
    assert ttt.main(short) == 0
    state = json.loads((out / "short" / "time_to_target.json").read_text())
    assert sorted(int(k) for k in state["evaluations"]) == [0, 4, 6]
    assert state["reached"] is None and state["epochs"] == 6
    evaluations = state["evaluations"]
    assert evaluations["6"]["seeds"]["0"]["exploitability"] < evaluations["0"]["seeds"]["0"]["exploitability"]
    capsys.readouterr()

    # Bad input: exit 2 with one line.
    (out / "q" / "snapshots" / "epoch_000000.bin").rename(out / "moved.bin")
    for p in (out / "q" / "snapshots").iterdir():
        p.unlink()
    assert ttt.main(["--from-run", str(out / "q"), "--out", str(out)]) == 2
    assert "kept no snapshots" in capsys.readouterr().err
    assert ttt.main(["--from-run", str(out / "q"), "--config", "quick", "--out", str(out)]) == 2
    assert ttt.main(["--name", "x", "--out", str(out)]) == 2
    assert ttt.main([*args[:-2], "--out", str(out), "--target", "0.1", "--minutes", "20"]) == 2
    assert "was measured with target=0.25" in capsys.readouterr().err
    assert ttt.main([*args, "--minutes", "5"]) == 2
    assert "was measured with minutes=20" in capsys.readouterr().err
    assert ttt.main(["--name", "a/b", "--config", "quick", "--out", str(out)]) == 2
    assert ttt.main(["--name", "r", "--config", "quick", "--set", "trainer.lrr=1", "--out", str(out)]) == 2
    assert "trainer.lrr" in capsys.readouterr().err


def test_every_lever_variant_is_a_valid_config(capsys, monkeypatch):
    """experiments/levers.py: each named variant's overrides load on the config it is meant for
    (the paper-settings variants on liars_dice_1x4f_paper, the shipped-* ones on
    liars_dice_1x5f) and change what they say; an unknown variant exits 2 naming it. On a CPU
    without a bf16 kernel the bf16 variants are refused by name at load time, so their other
    overrides are checked with the CPU check left out."""
    import rebel.config.train as train_config
    from rebel._core import mlp_supported_bf16_isas
    from rebel.cli.train import _config_path
    from rebel.config.common import ConfigError
    from rebel.config.train import load_train_config

    levers = load("levers")
    asks_bf16 = [name for name, overrides in levers.VARIANTS.items() if "search.precision=bf16" in overrides]
    assert asks_bf16  # the measured bf16 levers are still named
    if not mlp_supported_bf16_isas():
        with pytest.raises(ConfigError, match="search.precision: precision 'bf16' needs a CPU with AMX-BF16"):
            load_train_config(_config_path("liars_dice_1x4f_paper"), levers.VARIANTS[asks_bf16[0]])
        monkeypatch.setattr(train_config, "check_precision", lambda precision: None)
    for name, overrides in levers.VARIANTS.items():
        base = "liars_dice_1x5f" if name.startswith("shipped") else "liars_dice_1x4f_paper"
        config = load_train_config(_config_path(base), overrides)
        for item in overrides:
            key, text = item.split("=")
            section, field = key.split(".")
            value = getattr(getattr(config, section), field)
            assert (value == float(text)) if isinstance(value, (int, float)) else (value == text), (name, item)
    shipped = load_train_config(_config_path("liars_dice_1x5f"), levers.VARIANTS["shipped-noema"])
    assert shipped.trainer.ema_decay == 0 and shipped.trainer.train_ratio == 16
    assert levers.main(["--variants", "shipped,warp-drive", "--out", "/nonexistent"]) == 2
    assert "unknown variant 'warp-drive'" in capsys.readouterr().err


def test_lever_evaluations_are_kept_per_seed(tmp_path, monkeypatch):
    """experiments/levers.py keeps each evaluation seed's result as it finishes: a measurement
    killed after seed 0 does not evaluate seed 0 again, while another net or another N does."""
    import argparse

    import torch

    from rebel import _core
    from rebel.nets.value_mlp import ValueMLP, export_weights

    levers = load("levers")
    game = _core.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    run_dir = tmp_path / "shipped"
    run_dir.mkdir()
    torch.manual_seed(0)
    export_weights(ValueMLP(game.query_size, game.num_hands, hidden=16, layers=1), run_dir / "weights.bin")
    (run_dir / "metrics.jsonl").write_text(json.dumps(
        {"epoch": 3, "wall_seconds": 6.0, "examples_generated": 600, "examples_trained": 2400, "loss": 0.1}) + "\n")
    calls = []

    def fake_evaluate(game, settings, progress=False):
        calls.append(settings.seed)
        if len(calls) == 2 and settings.seed == 1:
            raise KeyboardInterrupt  # killed while evaluating the second seed
        return {"mode_b": [{"exploitability": 0.1 + settings.seed}], "net_kernel": "fp32/generic",
                "seconds": {"mode_b": 1.0}}

    class HeldOut:
        def error(self, predict):
            return {"heldout_mae": 0.0, "heldout_delta_mean": 0.0}

    monkeypatch.setattr(levers, "evaluate", fake_evaluate)
    args = argparse.Namespace(config="quick", seeds=[0, 1, 2], repeats=4, threads=1, eval_precision="fp32",
                              budget_minutes=0.1)
    with pytest.raises(KeyboardInterrupt):
        levers.measure("shipped", [], run_dir, HeldOut(), args)
    assert calls == [0, 1] and (run_dir / "eval_seed0.json").is_file()
    result = levers.measure("shipped", [], run_dir, HeldOut(), args)
    assert calls == [0, 1, 1, 2]  # seed 0 reused
    assert [r["exploitability"] for r in result["evaluation"]["runs"]] == [0.1, 1.1, 2.1]
    levers.measure("shipped", [], run_dir, HeldOut(), argparse.Namespace(**{**vars(args), "repeats": 8}))
    assert calls[4:] == [0, 1, 2]  # another N: every seed again
    torch.manual_seed(1)
    export_weights(ValueMLP(game.query_size, game.num_hands, hidden=16, layers=1), run_dir / "weights.bin")
    levers.measure("shipped", [], run_dir, HeldOut(), argparse.Namespace(**{**vars(args), "repeats": 8}))
    assert calls[7:] == [0, 1, 2]  # another net: every seed again


def test_oracle_cost_times_two_small_evaluations_and_extrapolates(tmp_path, capsys):
    """experiments/oracle_cost.py on 1x3f (T = 16): both oracle evaluations finish, the fit
    passes through them, and a run stopped by --timeout becomes a lower bound."""
    cost = load("oracle_cost")
    out = tmp_path / "cost.json"
    assert cost.main(["--games", "1x3f", "--iters", "16", "--repeats", "2", "4", "--out", str(out)]) == 0
    game = json.loads(out.read_text())["games"]["1x3f"]
    small, large = game["runs"]
    assert small["finished"] and large["finished"] and 0 <= small["exploitability"] < 1
    estimate = game["estimate_n1024"]
    assert estimate["fixed_seconds"] + 2 * estimate["per_policy_seconds"] == pytest.approx(small["seconds"])
    assert estimate["seconds"] == pytest.approx(estimate["fixed_seconds"] + 1024 * estimate["per_policy_seconds"])
    bound = cost.extrapolate(small, {"repeats": 4, "finished": False, "seconds_at_least": small["seconds"] + 2.0}, 1024)
    assert bound["seconds_at_least"] == pytest.approx(small["seconds"] + 1.0 * 1022)
    assert cost.extrapolate({"repeats": 2, "finished": False, "seconds_at_least": 9.0}, large, 1024) == {
        "seconds_at_least": 9.0, "basis": "N = 2 did not finish"}
    capsys.readouterr()
    assert cost.main(["--games", "3x9f", "--out", str(out)]) == 2
    assert "unknown game '3x9f'" in capsys.readouterr().err
    assert cost.main(["--games", "1x3f", "--repeats", "4", "2", "--out", str(out)]) == 2


def test_table2_oracle_row_shows_the_measured_cost_where_not_computed(tmp_path):
    """Where a game's oracle row was not computed, table2.md gives oracle_cost.py's estimate
    (or its lower bound); a computed row keeps its number; a broken cost file exits 2."""
    table2 = load("table2")
    refs = {"1x4f": {"oracle": 0.0165}}
    cost = {"1x4f": {"seconds": 2040.0}, "1x5f": {"seconds": 5.4 * 3600}, "2x3f": {"seconds_at_least": 20 * 3600}}
    md = table2.markdown({}, refs, table2.FULL_PLAN, cost)
    row = next(line for line in md.splitlines() if line.startswith("| exact leaf values"))
    assert row == ("| exact leaf values (oracle net), same protocol | 0.0165 | not computed (N = 1024: about 5.4 h, "
                   "oracle_cost.json) | not computed | not computed (N = 1024: over 20.0 h, oracle_cost.json) |")
    (tmp_path / "oracle_cost.json").write_text("{\"games\": {\"1x5f\": {}}}")
    with pytest.raises(table2.Refused, match="not an oracle_cost.py file"):
        table2.oracle_estimates(tmp_path)
    assert table2.oracle_estimates(tmp_path / "elsewhere") == {}


def test_lever_summary_keeps_earlier_variants(tmp_path, monkeypatch, capsys):
    """experiments/levers.py: a call that measures one variant rewrites levers.md and
    levers.json with every variant finished in the folder, in the earlier summary's order,
    not only with this call's."""
    levers = load("levers")

    def fake_result(name: str, mean: float) -> dict:
        return {"variant": name, "overrides": levers.VARIANTS[name], "train_wall_seconds": 60.0,
                "examples_generated": 100, "examples_trained": 400, "subgames_per_s": 10.0,
                "heldout": {"heldout_mae": 0.05, "heldout_delta_mean": 0.1},
                "evaluation": {"mean": mean, "min": mean, "max": mean}}

    for name, mean in [("shipped", 0.0124), ("shipped-noema", 0.0170), ("shipped-h128", 0.02)]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "result.json").write_text(json.dumps(fake_result(name, mean)))
    (tmp_path / "levers.json").write_text(json.dumps({"variants": [fake_result("shipped-noema", 0.0170),
                                                                  fake_result("shipped", 0.0124)]}))
    monkeypatch.setattr(levers, "heldout_set", lambda args: None)
    assert levers.main(["--config", "liars_dice_1x5f", "--variants", "shipped-h128", "--out", str(tmp_path)]) == 0
    rows = [line.split("|")[1].strip() for line in (tmp_path / "levers.md").read_text().splitlines()[2:]]
    assert rows == ["shipped-noema", "shipped", "shipped-h128"]
    summary = json.loads((tmp_path / "levers.json").read_text())
    assert [v["variant"] for v in summary["variants"]] == rows
    assert "shipped-noema" not in capsys.readouterr().out  # the printed table: this call's variants


def test_table2_set_overrides_the_plans_budget(tmp_path, monkeypatch):
    """`--set run.max_minutes=N` ends a fresh cell's training early: the --set overrides come
    after the plan's budget on the `rebel train` command line (as they do on a resume)."""
    table2 = load("table2")
    calls = []
    monkeypatch.setattr(table2.subprocess, "run", lambda cmd, check: calls.append(cmd))
    table2.train("kuhn-cfr", table2.QUICK_PLAN, tmp_path, False, ["run.max_minutes=2", "run.budget=training"])
    (cmd,) = calls
    minutes = [i for i, a in enumerate(cmd) if a.startswith("run.max_minutes=")]
    budgets = [a for a in cmd if a.startswith("run.budget=")]
    assert cmd[minutes[-1]] == "run.max_minutes=2" and budgets[-1] == "run.budget=training"
    assert len(minutes) == 2 and cmd[minutes[0]] == f"run.max_minutes={table2.QUICK_PLAN.games['kuhn']['minutes']}"


def test_table2_resume_keeps_the_runs_own_budget(tmp_path, monkeypatch):
    """A resumed cell trains under the budget its config.yaml records (the one it last ran under,
    e.g. from an earlier --set), not the plan's; --set on the resume still wins; a config.yaml
    that does not load is refused with its path."""
    table2 = load("table2")
    calls = []
    monkeypatch.setattr(table2.subprocess, "run", lambda cmd, check: calls.append(cmd))
    run_dir = tmp_path / "2x3f-cfr"
    run_dir.mkdir()
    config = (EXPERIMENTS / "results/table2/2x3f-cfr/config.yaml").read_text()
    (run_dir / "config.yaml").write_text(re.sub(r"max_minutes: .*", "max_minutes: 60.0", config))
    (run_dir / "checkpoint.pt").write_bytes(b"")
    assert table2.plan_minutes(table2.FULL_PLAN, "2x3f-cfr") == 180.0
    table2.train("2x3f-cfr", table2.FULL_PLAN, tmp_path, False)
    table2.train("2x3f-cfr", table2.FULL_PLAN, tmp_path, False, ["run.max_minutes=90"])
    first, second = calls
    assert "--resume" in first
    assert [a for a in first if a.startswith("run.max_minutes=")] == ["run.max_minutes=60"]
    assert "run.budget=training" in first
    assert [a for a in second if a.startswith("run.max_minutes=")][-1] == "run.max_minutes=90"
    (run_dir / "config.yaml").write_text("run: [not, a, mapping\n")
    with pytest.raises(table2.Refused, match="config.yaml"):
        table2.train("2x3f-cfr", table2.FULL_PLAN, tmp_path, False)


def test_table2_notes_a_budget_shortened_with_set(tmp_path):
    """A cell whose training was ended by `--set run.max_minutes=N` below the plan's budget is
    marked as such in the table; one that reached run.epochs first, or ran its whole budget, is
    not."""
    table2 = load("table2")
    config = (EXPERIMENTS / "results/table2/1x6f-fp/config.yaml").read_text()  # a resolved run config
    config = re.sub(r"max_minutes: .*", "max_minutes: 69.0", config)
    config = re.sub(r"budget: .*", "budget: training", config)
    (tmp_path / "config.yaml").write_text(config)
    note = table2.shortened_budget(tmp_path, {"training_seconds": 69.8 * 60, "wall_seconds": 113.2 * 60}, 180.0)
    assert note is not None and "run.max_minutes=69 (set with --set)" in note and "plan's 180 minutes" in note
    assert table2.shortened_budget(tmp_path, {"training_seconds": 30 * 60, "wall_seconds": 75 * 60}, 180.0) is None
    assert table2.shortened_budget(tmp_path, {"training_seconds": 69.8 * 60}, 60.0) is None
    assert table2.shortened_budget(tmp_path, {"training_seconds": 69.8 * 60}, None) is None
    assert table2.plan_minutes(table2.FULL_PLAN, "1x6f-fp") == 180.0
    assert table2.plan_minutes(table2.FULL_PLAN, "9x9f-fp") is None


def test_snapshot_average_applies_its_rule_and_matches_the_final_net_on_identical_snapshots(tmp_path, capsys):
    """experiments/snapshot_average.py: the snapshots of the last fraction of the epochs,
    averaged parameter by parameter, evaluated with the final net's recorded protocol and
    seeds; where those snapshots all are the final net the averaged net is that net and reads
    its numbers to the last digit. Cached; bad input exits 2 with one line."""
    import shutil

    import numpy as np

    from rebel.nets.weights_io import average_weights, payload_from_bytes
    from tests.conftest import run_cli

    script = load("snapshot_average")
    run = tmp_path / "run"
    trained = run_cli("train", "quick", "run.epochs=4", "run.snapshot_every=1", "trainer.epoch_examples=1024",
                      "search.iterations=32", "selfplay.threads=1", "trainer.torch_threads=1",
                      "evaluation.every=0", "evaluation.final=false", "evaluation.references=false",
                      "evaluation.heldout_steps=16", f"run.dir={tmp_path}", "run.name=run", "--json", timeout=300)
    assert trained.returncode == 0, trained.stderr
    assert sorted(p.name for p in (run / "snapshots").iterdir()) == [f"epoch_00000{e}.bin" for e in range(5)]
    assert script.main([str(run)]) == 2  # no eval.json yet
    assert "no eval.json" in capsys.readouterr().err

    protocol = {"mode": "b", "depth": 2, "iterations": 16, "repeats": 8, "solver": "lcfr", "precision": "fp32"}
    final_runs = [script.evaluate_seed(run, run / "weights.bin", protocol, seed, 1, False) for seed in (0, 1)]
    (run / "eval.json").write_text(json.dumps({"format": 1, "protocol": protocol, "runs": final_runs}))

    # --fraction 0.5 of 4 epochs: the snapshots of epochs 2, 3 and 4, equal weights.
    assert script.main([str(run), "--fraction", "0.5", "--threads", "1", "--no-progress"]) == 0
    out = json.loads((run / "eval_avg.json").read_text())
    assert out["snapshots"] == [2, 3, 4] and out["final_epoch"] == 4
    payloads = [payload_from_bytes((run / "snapshots" / f"epoch_00000{e}.bin").read_bytes())[1] for e in (2, 3, 4)]
    _, averaged = payload_from_bytes((run / "weights_avg.bin").read_bytes())
    assert np.allclose(averaged, np.mean(np.array(payloads, dtype=np.float64), axis=0), rtol=0, atol=1e-7)
    assert not np.array_equal(averaged, payloads[-1])
    assert [r["seed"] for r in out["averaged"]["runs"]] == [0, 1] and 0 < out["averaged"]["mean"] < 1
    assert out["final_net"]["mean"] == pytest.approx(sum(r["exploitability"] for r in final_runs) / 2)
    assert set(out["heldout"]) == {"averaged", "final_net"} and out["heldout"]["averaged"]["heldout_mae"] > 0
    assert "averaged net (3 snapshots, epochs 2-4)" in capsys.readouterr().out
    stamp = (run / "eval_avg.json").stat().st_mtime_ns
    assert script.main([str(run), "--fraction", "0.5", "--threads", "1", "--no-progress"]) == 0  # cached
    assert (run / "eval_avg.json").stat().st_mtime_ns == stamp

    # Known value: snapshots that all are the final net average to that net, bit for bit.
    same = tmp_path / "same"
    shutil.copytree(run, same)
    for e in (2, 3, 4):
        shutil.copy(run / "weights.bin", same / "snapshots" / f"epoch_00000{e}.bin")
    assert script.main([str(same), "--fraction", "0.5", "--threads", "1", "--no-progress", "--force"]) == 0
    assert (same / "weights_avg.bin").read_bytes() == (run / "weights.bin").read_bytes()
    again = json.loads((same / "eval_avg.json").read_text())
    assert [r["exploitability"] for r in again["averaged"]["runs"]] == [r["exploitability"] for r in final_runs]
    assert again["heldout"]["averaged"] == again["heldout"]["final_net"]
    capsys.readouterr()

    # Bad input: exit 2 with one line naming the problem.
    for args, message in (([str(run), "--fraction", "0"], "--fraction must be in (0, 1]"),
                          ([str(run), "--fraction", "0.1", "--force"], "at least 2 are needed"),
                          ([str(tmp_path / "nowhere")], "no such run directory")):
        assert script.main(args) == 2
        assert message in capsys.readouterr().err
    with pytest.raises(ValueError, match="another architecture"):
        other = (run / "weights.bin").read_bytes()
        from rebel.nets.value_mlp import ValueMLP, weights_to_bytes
        average_weights([other, weights_to_bytes(ValueMLP(4, 3, hidden=8, layers=1))])
    with pytest.raises(ValueError, match="no weights"):
        average_weights([])


def test_bf16_error_sources_separates_the_roundings(capsys):
    """experiments/bf16_error_sources.py: the float64 emulation of the bf16 path without
    roundings is the float32 net; with every input row identical and calibrated on itself,
    bias correction plus offset remove all rounding (known value: zero); on the committed
    1x4f net each rounding alone differs less than both, and the emulated float32 net is the
    native one. A run directory without weights exits 2."""
    import torch

    from rebel.nets.value_mlp import ValueMLP

    script = load("bf16_error_sources")
    torch.manual_seed(0)
    model = ValueMLP(10, 3, hidden=32, layers=3).double()
    rows = torch.randn(1, 10, dtype=torch.float64).repeat(6, 1)
    with torch.no_grad():
        exact, _ = script.emulate(model, rows, round_weights=False, round_inputs=False)
        assert torch.allclose(exact, model(rows), rtol=0, atol=1e-12)
        means = [h.mean(dim=0) for h in script.layer_inputs(model, rows)]
        fixed, _ = script.emulate(model, rows, round_weights=True, round_inputs=True, means=means,
                                  bias_correction=True, offset=True)
        rounded, _ = script.emulate(model, rows, round_weights=True, round_inputs=True)
    assert (fixed - exact).abs().max() < 1e-12 < (rounded - exact).abs().max()

    run = EXPERIMENTS / "results" / "training_curve" / "1x4f-60min"
    assert script.main([str(run)]) == 0
    report = json.loads(capsys.readouterr().out)
    v = report["variants"]
    assert 0 < v["weights"]["max_abs_diff"] < v["both"]["max_abs_diff"] < 0.05
    assert 0 < v["activations"]["max_abs_diff"] < v["both"]["max_abs_diff"]
    assert v["both+bias_correction"]["mean_abs_diff"] < v["both"]["mean_abs_diff"]
    assert report["emulated_fp32_vs_native_fp32_max_abs_diff"] < 1e-5
    assert len(report["largest_differences"]["rows"]) == 10
    assert script.main([str(run.parent)]) == 2
    assert "has no config.yaml" in capsys.readouterr().err
    assert script.main([str(run), "--calibration-seed", "12345"]) == 2  # the run's own held-out seed
    assert "the run's own held-out seed" in capsys.readouterr().err


def test_leduc_quick_pipeline(tmp_path, capsys):
    """experiments/leduc.py --quick on limit Leduc: full-game rows (known values), the zero,
    oracle and trained nets over three seeds, the stronger search, the curve, the cache."""
    leduc = load("leduc")
    out = tmp_path / "leduc"
    assert leduc.main(["--quick", "--games", "leduc", "--out", str(out)]) == 0
    result = json.loads((out / "leduc.json").read_text())["results"]["leduc"]
    full = result["full_game"]
    # Full-game solvers on limit Leduc after 64 iterations (this repository's solvers; LCFR at
    # 1024 is 0.00899, tests/games/test_leduc_solvers.py).
    assert full["lcfr"]["exploitability"] == pytest.approx(0.126027, abs=1e-5)
    assert full["dcfr"]["exploitability"] < full["lcfr"]["exploitability"] < full["lfp"]["exploitability"]
    search = result["search"]
    assert list(search) == ["zero net", "oracle net", "trained net", "trained net, lcfr T=64 depth 10",
                            "oracle net, lcfr T=32 depth 10", "oracle net, dcfr T=32 depth 10"]
    for s in search.values():
        assert s["seeds"] == [0, 1, 2] and 0 < s["min"] <= s["mean"] <= s["max"]
    assert search["oracle net"]["mean"] < search["zero net"]["mean"]
    # The exact-leaf stronger row with the oracle rows' own search is the oracle row itself
    # (its oracle iterations named in its key, so it is cached apart): the same figures.
    assert search["oracle net, lcfr T=32 depth 10"]["values"] == search["oracle net"]["values"]
    assert "exact leaves, dcfr T=32 depth 10 below a third" in result["targets"]
    exact_rows = sorted((out / "leduc" / "eval").glob("oracle_*_oracleT32_seed*.json"))
    assert len(exact_rows) == 6  # two searches, three seeds
    for path in exact_rows:
        row = json.loads(path.read_text())
        assert row["protocol"]["oracle_iterations"] == 32
        # N = 1, 2, 4, 8 of the same samples; the last is the row's figure.
        assert [n for n, _ in row["curve_in_n"]] == [1, 2, 4, 8]
        assert row["curve_in_n"][-1][1] == row["exploitability"]
    assert set(search["oracle net, dcfr T=32 depth 10"]["mean_in_n"]) == {"1", "2", "4", "8"}
    assert result["run"]["epoch"] == 2 and result["run"]["finished"]
    assert (out / "curves_leduc.png").is_file()
    assert "| search, oracle net |" in (out / "leduc.md").read_text()
    # A second call reads every row from the cache; a cache of another protocol is refused.
    before = {p.name: p.stat().st_mtime_ns for p in (out / "leduc" / "eval").iterdir()}
    assert leduc.main(["--quick", "--games", "leduc", "--out", str(out)]) == 0
    assert {p.name: p.stat().st_mtime_ns for p in (out / "leduc" / "eval").iterdir()} == before
    row = next((out / "leduc" / "eval").glob("zero_*seed0.json"))
    data = json.loads(row.read_text())
    data["protocol"]["repeats"] = 99
    row.write_text(json.dumps(data))
    capsys.readouterr()
    assert leduc.main(["--quick", "--games", "leduc", "--out", str(out)]) == 2
    assert "another protocol" in capsys.readouterr().err
    # --net best: the trained rows are the net the run chose (the quick run keeps it), by its
    # lowest in-run figure; a run without that choice is refused by name.
    records = [r for r in map(json.loads, (out / "leduc" / "run" / "metrics.jsonl").read_text().splitlines())
               if r.get("kind") is None and "exploitability" in r]
    chosen = min(records, key=lambda r: (r["exploitability"], r["epoch"]))
    best_out = tmp_path / "best"
    assert leduc.main(["--quick", "--games", "leduc", "--no-train", "--net", "best", "--stronger", "none",
                       "--stronger-oracle", "none", "--run", f"leduc={out / 'leduc' / 'run'}",
                       "--out", str(best_out)]) == 0
    best = json.loads((best_out / "leduc.json").read_text())["results"]["leduc"]
    assert best["run"]["net"] == "best.bin" and best["run"]["chosen"]["epoch"] == chosen["epoch"]
    assert best["run"]["chosen"]["exploitability"] == chosen["exploitability"]
    assert all(json.loads(p.read_text())["protocol"]["net"].endswith("best.bin")
               for p in (best_out / "leduc" / "eval").glob("trained_*.json"))
    assert "chosen net (evaluation.keep_best, best.bin): epoch" in (best_out / "leduc.md").read_text()
    (out / "leduc" / "run" / "best.bin").unlink()
    capsys.readouterr()
    assert leduc.main(["--quick", "--games", "leduc", "--no-train", "--net", "best", "--stronger", "none",
                       "--run", f"leduc={out / 'leduc' / 'run'}", "--out", str(best_out)]) == 2
    assert "no best.bin (the run was not trained with evaluation.keep_best=true)" in capsys.readouterr().err
    for bad, message in ((["--games", "poker"], "unknown game"), (["--run", "leduc"], "GAME=DIR"),
                         (["--stronger", "lcfr:x"], "SOLVER:T:DEPTH"),
                         (["--stronger-oracle", "lcfr:2"], "--stronger-oracle must be SOLVER:T:DEPTH")):
        assert leduc.main([*bad, "--out", str(out)]) == 2
        assert message in capsys.readouterr().err


def test_leaf_query_error_is_zero_for_exact_values_and_finds_the_nets_error(tmp_path, capsys):
    """experiments/leaf_query_error.py on limit Leduc: a value function that answers every
    recorded query with the oracle's exact values has no error (the labels are the same
    solve); the shipped net's error at the search's own leaf queries is measured and reported
    per leaf (T = 64: a weighted mean |error| of 0.193 chips over 780 rows for the 30-minute
    Zen 5 net that ships as pretrained:leduc)."""
    import numpy as np

    from rebel import _core
    from rebel.games import game_from_config

    script = load("leaf_query_error")
    game = game_from_config({"name": "leduc"})
    tree = _core.build_tree(game, [], 10, True)
    leaves = script.leaf_histories(game, tree)
    oracle = _core.OracleNet(game, "lcfr", 64)
    H, F = game.num_hands, game.feature_size

    def exact(rows):
        out = []
        for row in rows:
            history = leaves[(float(row[0]),) + tuple(row[2:2 + F].tolist())]
            b = [row[2 + F + p * H:2 + F + (p + 1) * H].astype(np.float64) for p in range(2)]
            out.append(_core.net_values(oracle, game, [history], int(row[1]), b[0] / b[0].sum(),
                                        b[1] / b[1].sum())[0])
        return np.array(out)

    tree, batches = script.record_root_search(game, exact, "lcfr", 10, 16)
    assert len(batches) == 32 and len(leaves) == 18
    result = script.leaf_errors(game, tree, batches, 64, 1)
    assert result["rows_labelled"] > 0 and result["weighted_mae"] < 1e-12 and result["delta_mean"] < 1e-12

    assert script.main(["--quick", "--out", str(tmp_path)]) == 0
    saved = json.loads((tmp_path / "leduc_0_leduc_T64.json").read_text())
    assert saved["rows_labelled"] == 780 and saved["weighted_mae"] == pytest.approx(0.193, abs=1e-3)
    assert saved["per_leaf_second_half"][0]["weighted_abs"] >= saved["per_leaf_second_half"][-1]["weighted_abs"]
    assert "| pretrained:leduc | 64 | 780 |" in capsys.readouterr().out


def test_leaf_query_finetune_measures_each_round_and_fits_the_labels(tmp_path):
    """experiments/leaf_query_finetune.py on limit Leduc: round 0's error at the search's own
    leaf queries is leaf_query_error.py's measure of the same net and settings (same queries,
    same exact labels); fine-tuning on labelled queries lowers the loss on them; --quick writes
    every round's net and record."""
    import numpy as np
    import torch

    from rebel.games import game_from_config
    from rebel.nets.pretrained import resolve_net
    from rebel.nets.value_mlp import load_weights, to_native

    finetune, measure = load("leaf_query_finetune"), load("leaf_query_error")
    game = game_from_config({"name": "leduc"})
    model = load_weights(resolve_net("pretrained:leduc"))
    native = to_native(model, game, precision="fp32")
    tree, batches = measure.record_root_search(game, native.forward, "lcfr", 10, 32)
    rows, exact, predicted = finetune.label_batches(game, tree, batches, 32, 3)
    reference = measure.leaf_errors(game, tree, batches, 32, 3)
    assert len(rows) == reference["rows_labelled"] > 0
    # (the beliefs are normalised from float32 rows here, in float64 there)
    assert finetune.weighted_mae(game, rows, exact, predicted) == pytest.approx(reference["weighted_mae"], rel=1e-6)
    assert finetune.weighted_mae(game, rows, exact, exact) == 0.0

    def loss() -> float:
        with torch.no_grad():
            out = model(torch.from_numpy(rows)).double().numpy()
        return float(np.mean(np.abs(out - exact)))

    before = loss()
    finetune.fine_tune(model, rows, exact, epochs=30, lr=1e-3, batch_size=256, unit=1.0, seed=0)
    assert loss() < 0.7 * before

    assert finetune.main(["--quick", "--out", str(tmp_path)]) == 0
    saved = json.loads((tmp_path / "rounds.json").read_text())
    assert [r["round"] for r in saved["rounds"]] == [0, 1, 2]
    assert saved["rounds"][0]["weighted_mae"] == pytest.approx(reference["weighted_mae"], rel=1e-6)
    assert "train_loss" in saved["rounds"][1] and "train_loss" not in saved["rounds"][2]
    assert all((tmp_path / f"round_{r}.bin").is_file() for r in range(3))


def test_suit_symmetry_leaves_exact_values_unchanged_and_makes_a_net_equivariant():
    """experiments/suit_symmetry.py's swap is the game's own: exact leaf values (the oracle)
    at the root search's queries are unchanged by the symmetrisation (every suit-swapped query
    is another leaf of the tree, with the swapped values), and the symmetrised trained net
    answers a suit-swapped query with its answer swapped, which the net alone does not."""
    import numpy as np

    from rebel import _core
    from rebel.games import game_from_config
    from rebel.nets.pretrained import resolve_net

    script, measure = load("suit_symmetry"), load("leaf_query_error")
    game = game_from_config({"name": "leduc"})
    H, F = game.num_hands, game.feature_size
    perm = script.suit_swap(game)
    assert perm.tolist() == [1, 0, 3, 2, 5, 4]
    tree = _core.build_tree(game, [], 10, True)
    leaves = measure.leaf_histories(game, tree)
    oracle = _core.OracleNet(game, "lcfr", 64)

    def exact(rows):
        out = []
        for row in rows:
            history = leaves[(float(row[0]),) + tuple(row[2:2 + F].tolist())]
            b = [row[2 + F + p * H:2 + F + (p + 1) * H].astype(np.float64) for p in range(2)]
            out.append(_core.net_values(oracle, game, [history], int(row[1]), b[0] / b[0].sum(), b[1] / b[1].sum())[0])
        return np.array(out)

    _, batches = measure.record_root_search(game, exact, "lcfr", 10, 4)
    rows = np.concatenate([rows for rows, _ in batches])
    boards = {int(np.argmax(row[2 + script.BOARD_FEATURE:2 + script.BOARD_FEATURE + H])) for row in rows}
    assert boards == set(range(H))  # every board card is queried, so the swap meets both suits
    np.testing.assert_allclose(script.symmetric(game, exact)(rows), exact(rows), rtol=0, atol=1e-9)

    net = _core.MlpValueNet(game, resolve_net("pretrained:leduc"), precision="fp32")
    swap_rows = np.arange(2 + F + 2 * H)
    swap_rows[2 + script.BOARD_FEATURE:2 + script.BOARD_FEATURE + H] = 2 + script.BOARD_FEATURE + perm
    for p in range(2):
        swap_rows[2 + F + p * H:2 + F + (p + 1) * H] = 2 + F + p * H + perm
    swapped = np.ascontiguousarray(rows[:, swap_rows])
    symmetric_net = script.symmetric(game, net.forward)
    np.testing.assert_allclose(symmetric_net(swapped), symmetric_net(rows)[:, perm], rtol=0, atol=1e-4)
    assert np.abs(net.forward(swapped) - net.forward(rows)[:, perm]).max() > 1e-3
    with pytest.raises(ValueError, match="needs a Leduc game"):
        script.suit_swap(game_from_config({"name": "kuhn"}))


def test_checkpoint_weights_exports_the_average_as_weights_bin_and_the_raw_weights(tmp_path, capsys):
    """The checkpoint's average is weights.bin byte for byte; its raw weights are the trained
    model's (weights.bin itself in a run without an average); the average of a run that keeps
    none and a missing run are refused with exit 2."""
    from rebel.config.common import to_yaml
    from rebel.config.train import load_train_config, trained_net_metadata
    from rebel.nets.value_mlp import weights_to_bytes
    from rebel.train.run import Training
    from rebel.train.rundir import RunDirectory

    script = load("checkpoint_weights")
    tiny = ["game.num_dice=1", "game.num_faces=3", "search.iterations=64", "selfplay.threads=1",
            "trainer.torch_threads=1", "trainer.epoch_examples=512", "trainer.batch_size=128", "run.epochs=2",
            "run.checkpoint_every=1", "evaluation.every=0", "evaluation.final=false",
            "evaluation.references=false", "evaluation.heldout_steps=0"]
    runs = {}
    for name, decay in (("average", 0.9), ("plain", 0.0)):
        config = load_train_config(None, [*tiny, f"trainer.ema_decay={decay}"])
        training = Training(config, RunDirectory.create(tmp_path / name, to_yaml(config)), show_progress=False)
        training.run()
        runs[name] = training
    run = tmp_path / "average"
    assert script.main([str(run), "average", str(tmp_path / "avg.bin")]) == 0
    assert (tmp_path / "avg.bin").read_bytes() == (run / "weights.bin").read_bytes()
    assert script.main([str(run), "raw", str(tmp_path / "raw.bin")]) == 0
    assert "raw weights of epoch 2" in capsys.readouterr().out
    assert (tmp_path / "raw.bin").read_bytes() == weights_to_bytes(
        runs["average"].trainer.model, trained_net_metadata(runs["average"].config))  # naming the run's game
    assert (tmp_path / "raw.bin").read_bytes() != (run / "weights.bin").read_bytes()

    assert script.main([str(tmp_path / "plain"), "raw", str(tmp_path / "x.bin")]) == 0
    assert (tmp_path / "x.bin").read_bytes() == (tmp_path / "plain" / "weights.bin").read_bytes()
    (tmp_path / "x.bin").unlink()
    capsys.readouterr()
    assert script.main([str(tmp_path / "plain"), "average", str(tmp_path / "x.bin")]) == 2
    assert "keeps no moving average" in capsys.readouterr().err
    assert script.main([str(tmp_path / "missing"), "raw", str(tmp_path / "x.bin")]) == 2
    assert not (tmp_path / "x.bin").exists()


def test_oracle_searches_reproduce_rebel_eval_and_keep_finished_seeds(tmp_path, capsys, monkeypatch):
    """experiments/oracle_searches.py on 1x3f (T = 16, N = 4): each seed's figure is what
    rebel's evaluate gives for the same exact-leaf search; a second call recomputes nothing;
    a cached file of another protocol and an unknown solver exit with 2."""
    from rebel import _core
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings

    searches = load("oracle_searches")
    out = tmp_path / "rows"
    small = ["--game", "1x3f", "--iters", "16", "--oracle-iters", "32", "--repeats", "4", "--threads", "1",
             "--out", str(out)]
    assert searches.main(small + ["--searches", "lcfr,cfr-avg", "--seeds", "0,1"]) == 0
    summary = json.loads((out / "1x3f_summary.json").read_text())
    rows = {r["solver"]: r for r in summary["rows"]}
    assert [r["seed"] for r in rows["cfr-avg"]["runs"]] == [0, 1]
    settings = EvalSettings(net="oracle", solver="cfr-avg", depth=2, iterations=16, repeats=4, threads=1, seed=1,
                            off_path="skip", mode_a=False, full_game=False, oracle_iterations=32)
    direct = evaluate(_core.make_game("liars_dice", {"num_dice": 1, "num_faces": 3}), settings, progress=False)
    assert rows["cfr-avg"]["runs"][1]["exploitability"] == pytest.approx(
        direct["mode_b"][-1]["exploitability"], abs=1e-12)
    values = [r["exploitability"] for r in rows["lcfr"]["runs"]]
    assert rows["lcfr"]["mean"] == pytest.approx(sum(values) / 2)
    assert rows["lcfr"]["trained_net"] is None  # no Table 2 cell for 1x3f
    assert "| cfr-avg |" in capsys.readouterr().out

    def no_subprocess(*args, **kwargs):
        raise AssertionError("a cached seed was recomputed")

    monkeypatch.setattr(searches.subprocess, "run", no_subprocess)
    assert searches.main(small + ["--searches", "lcfr,cfr-avg", "--seeds", "0,1"]) == 0
    # a call for one solver keeps the other solver's rows in the summary
    assert searches.main(small + ["--searches", "cfr-avg", "--seeds", "0"]) == 0
    kept = {r["solver"]: r for r in json.loads((out / "1x3f_summary.json").read_text())["rows"]}
    assert kept == rows
    capsys.readouterr()
    # the same file name under another T is refused, not mixed in
    cached = json.loads((out / "1x3f_lcfr_T16_d2_seed0.json").read_text())
    (out / "1x3f_lcfr_T16_d2_seed0.json").write_text(json.dumps({**cached, "iterations": 32}))
    assert searches.main(small + ["--searches", "lcfr", "--seeds", "0"]) == 2
    assert "move it away" in capsys.readouterr().err
    assert searches.main(small + ["--searches", "lcfr,cfr-d"]) == 2
    assert "unknown solver" in capsys.readouterr().err
    assert searches.main(["--game", "4dice"]) == 2
