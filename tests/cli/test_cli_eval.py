"""``rebel eval``: JSON report, the mode-(b) policy file, MLP weights files and usage errors."""
from __future__ import annotations

import json

import pytest
from conftest import run_cli

import rebel
from rebel.cli import main
from rebel.interop.policy_io import load_policy


def test_eval_json_report_and_policy_file(tmp_path, capsys):
    out = tmp_path / "mode_b.json"
    code = main(["eval", "--game", "liars_dice", "--dice", "1", "--faces", "3", "--net", "zero", "--depth", "2",
                 "--iters", "128", "--repeats", "8", "--threads", "2", "--json", "--policy-out", str(out)])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["game"] == {"name": "liars_dice", "num_dice": 1, "num_faces": 3}
    assert (report["solver"], report["depth"], report["iterations"], report["repeats"]) == ("lcfr", 2, 128, 8)
    assert [row["num_policies"] for row in report["mode_b"]] == [1, 2, 4, 8]
    for key in ("full_game", "mode_a"):
        assert 0 <= report[key]["exploitability"] < 1
    assert set(report["seconds"]) >= {"full_game", "mode_a", "mode_b", "total"}
    # The policy file is the mode-(b) average and evaluates to the reported number.
    loaded = load_policy(out)
    assert rebel.exploitability(loaded.game, loaded.tree, loaded.policy)["exploitability"] == pytest.approx(
        report["mode_b"][-1]["exploitability"], abs=1e-12)
    # The full-game number is the full-game solver's at the same iterations.
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    tree = rebel.build_tree(game)
    solver = rebel.SubgameSolver(game, tree, solver="lcfr")
    solver.run(128)
    assert report["full_game"]["exploitability"] == rebel.exploitability(game, tree, solver.average_policy())[
        "exploitability"]


def test_eval_kuhn_oracle_text_report(capsys):
    assert main(["eval", "--game", "kuhn", "--net", "oracle", "--iters", "256", "--repeats", "4", "--no-mode-a"]) == 0
    text = capsys.readouterr().out
    assert "mode (b)" in text and "N =     4" in text and "mode (a)" not in text


def test_eval_with_exported_mlp_weights(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    from rebel.nets.value_mlp import ValueMLP, export_weights

    torch.manual_seed(0)
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    weights = tmp_path / "net.bin"
    export_weights(ValueMLP.for_game(game, hidden=32, layers=1), weights)
    assert main(["eval", "--dice", "1", "--faces", "3", "--net", str(weights), "--iters", "32", "--repeats", "2",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["net"] == str(weights)
    assert 0 <= report["mode_b"][-1]["exploitability"] <= 1
    # The same weights do not fit 1x4f: a usage error, not a crash.
    proc = run_cli("eval", "--dice", "1", "--faces", "4", "--net", str(weights), "--iters", "8", "--repeats", "1")
    assert proc.returncode == 2
    assert "error" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("flags, message", [
    (["--depth", "0"], "--depth must be >= 1"),
    (["--repeats", "0"], "--repeats must be >= 1"),
    (["--threads", "0"], "--threads must be >= 1"),
    (["--net", "no/such/file.bin"], "not a file"),
    (["--dice", "0"], "num_dice"),
    (["--faces", "1"], "num_faces"),
    (["--game", "chess"], "chess"),
    (["--game", "kuhn", "--dice", "2"], "--dice does not apply to kuhn"),
    (["--policy-out", "x.txt"], ".json or .npz"),
    (["--oracle-iters", "0"], "--oracle-iters"),
])
def test_eval_usage_errors_exit_2(flags, message):
    proc = run_cli("eval", "--iters", "8", "--repeats", "1", *flags)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_truncated_weights_file_is_a_usage_error(tmp_path):
    bad = tmp_path / "truncated.bin"
    bad.write_bytes(b"REBELMLP" + b"\0" * 10)
    proc = run_cli("eval", "--net", str(bad), "--iters", "8", "--repeats", "1")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


def test_eval_config_file_overrides_and_flags_merge_in_order(tmp_path):
    path = tmp_path / "e.yaml"
    path.write_text("game: {name: liars_dice, num_faces: 3}\nsearch: {iterations: 16, repeats: 4, threads: 1}\n")
    proc = run_cli("eval", "--config", str(path), "search.repeats=2", "--iters", "8", "--no-mode-a", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["game"] == {"name": "liars_dice", "num_dice": 1, "num_faces": 3}
    assert report["iterations"] == 8 and report["repeats"] == 2 and "mode_a" not in report


@pytest.mark.parametrize("args, message", [
    (["search.iters=3"], "unknown config key 'search.iters'"),
    (["search.depth=deep"], "search.depth"),
    (["search.depth=0"], "--depth must be >= 1"),
    (["search.off_path=never"], "--off-path must be one of skip, floor, conditional, got 'never' (search.off_path)"),
    (["game.name=kuhn", "game.num_dice=2"], "unknown config key 'game.num_dice' for game 'kuhn'"),
])
def test_eval_config_mistakes_exit_2(args, message):
    proc = run_cli("eval", *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_python_api_and_cli_measure_alike_in_fp32(capsys):
    """One settings type: the Python API's defaults are the CLI's, fp32 included, so both give
    the same number on any CPU. On a CPU with a faster bf16 kernel, ``precision=auto`` would
    pick it (and move the number); REBEL_CPU_DISABLE can only take features away, so the
    bf16 half runs where the CPU has bf16 and the fp32 half everywhere."""
    from dataclasses import asdict

    from rebel.config.eval import EvalConfig
    from rebel.nets.precision import EVAL_PRECISION
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings

    assert EvalSettings().precision == EVAL_PRECISION == "fp32"
    assert asdict(EvalConfig().search) == asdict(EvalSettings())
    net = "pretrained:quick"
    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    api = evaluate(game, EvalSettings(net=net, iterations=64, repeats=8, mode_a=False, full_game=False))
    assert main(["eval", "--net", net, "--iters", "64", "--repeats", "8", "--no-mode-a", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert api["net_kernel"]["precision"] == cli["net_kernel"]["precision"] == "fp32"
    assert api["mode_b"] == cli["mode_b"]
    if rebel._core.mlp_supported_bf16_isas():
        rounded = evaluate(game, EvalSettings(net=net, iterations=64, repeats=8, mode_a=False, full_game=False,
                                              precision="bf16"))
        assert rounded["net_kernel"]["precision"] == "bf16"
        assert rounded["mode_b"][-1]["exploitability"] != api["mode_b"][-1]["exploitability"]


def test_evaluate_takes_a_python_value_net_in_place_of_settings_net():
    """``evaluate(value_net=...)`` answers the leaf queries with the given net: a Python
    wrapper that forwards to the file's native net gives the file's figures exactly (mode (a)
    and every N of mode (b)), and a wrapper that answers zeros gives the zero net's. Mode (b)
    computed elsewhere cannot use a net of this process: a clear error."""
    import numpy as np

    from rebel.nets.pretrained import resolve_net
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings

    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
    settings = EvalSettings(net="pretrained:quick", iterations=64, repeats=8, full_game=False)
    native = rebel._core.MlpValueNet(game, resolve_net(settings.net), precision="fp32")
    forwarded = rebel._core.PythonValueNet(game, native.forward, "forwarded")
    plain = evaluate(game, settings)
    wrapped = evaluate(game, settings, value_net=forwarded)
    assert wrapped["mode_a"] == plain["mode_a"]
    assert wrapped["mode_b"] == plain["mode_b"]

    zeros = rebel._core.PythonValueNet(game, lambda rows: np.zeros((rows.shape[0], game.num_hands)), "zeros")
    zero_settings = EvalSettings(net="zero", iterations=64, repeats=8, full_game=False)
    assert evaluate(game, settings, value_net=zeros)["mode_b"] == evaluate(game, zero_settings)["mode_b"]
    assert plain["mode_b"][-1]["exploitability"] != evaluate(game, zero_settings)["mode_b"][-1]["exploitability"]

    with pytest.raises(ValueError, match="value_net"):
        evaluate(game, settings, value_net=zeros, sample_policies=lambda *args: {})
