"""One CLI: the same solver names, range checks, messages, flags and help style in every
subcommand; output files checked before computing; computed results never lost."""
from __future__ import annotations

import json
import os

import pytest
from conftest import kuhn, liars_dice, run_cli, solved

import rebel
from rebel.cli import build_parser, main
from rebel.cli import common as cli_common
from rebel.interop.policy_io import load_policy

FAST = {"solve": [], "eval": ["--repeats", "1", "--no-mode-a", "--threads", "1"]}


def _usage_error(proc, message: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr  # one line, no traceback, no usage block
    assert message in lines[0], lines[0]
    assert proc.stdout == ""


# ------------------------------------------------------------------------ solver names


def test_eval_solver_names_mean_what_solve_means(capsys):
    """`cfr` is vanilla CFR everywhere: eval's full-game row equals `rebel solve --solver cfr`."""
    for solver in ("cfr", "fp", "lcfr"):
        assert main(["eval", "--solver", solver, "--iters", "64", *FAST["eval"], "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["solver"] == solver
        assert report["full_game"]["exploitability"] == solved(liars_dice(1, 4), solver, 64).exploitability


def test_eval_default_solver_is_linear_cfr_and_oracle_solver_is_kept(capsys):
    assert main(["eval", "--game", "kuhn", "--net", "oracle", "--oracle-solver", "cfr", "--oracle-iters", "32",
                 "--iters", "64", *FAST["eval"], "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["solver"] == "lcfr"
    assert report["oracle"] == {"solver": "cfr", "iterations": 32, "values": "root_mean"}
    assert report["full_game"]["exploitability"] == solved(kuhn(), "lcfr", 64).exploitability


# ---------------------------------------------------------------- the same mistakes


@pytest.mark.parametrize("command", ["solve", "eval"])
@pytest.mark.parametrize("flags, message", [
    (["--iters", "abc"], "argument --iters/--iterations: expected an integer, got 'abc'"),
    (["--iters", "0"], "--iters must be >= 1, got 0"),
    (["--iters", "-3"], "--iters must be >= 1, got -3"),
    (["--iters", "3000000000"], "--iters must be <= 2147483647, got 3000000000"),
    (["--iters", "99999999999999999999"], "--iters must be <= 2147483647, got 99999999999999999999"),
    (["--game", "kuhn", "--dice", "2"], "--dice does not apply to kuhn (its parameters: none)"),
    (["--game", "kuhn", "--faces", "3"], "--faces does not apply to kuhn (its parameters: none)"),
    (["--dice", "0"], "num_dice must be >= 1"),
    (["--game", "chess"], "unknown game 'chess'"),
    (["--solver", "cfr++"], "argument --solver: invalid choice: 'cfr++'"),
    (["--policy-out", "p.txt"], "--policy-out 'p.txt' must end in .json or .npz"),
    (["--dice", "5", "--faces", "6"], "use a smaller game (this command needs the whole public tree)"),
])
def test_same_mistake_same_message(command, flags, message):
    proc = run_cli(command, *flags)
    _usage_error(proc, message)
    assert "depth limit" not in proc.stderr


@pytest.mark.parametrize("flag, value, message", [
    ("--depth", "0", "--depth must be >= 1, got 0"),
    ("--depth", "99999999999999999999", "--depth must be <= 2147483647"),
    ("--repeats", "99999999999999999999", "--repeats must be <= 2147483647"),
    ("--threads", "99999999999999999999", "--threads must be <= 256"),
    ("--threads", "0", "--threads must be >= 1, got 0"),
    ("--seed", "-1", "--seed must be >= 0, got -1"),
    ("--seed", "99999999999999999999", "--seed must be <= 18446744073709551615"),
    ("--oracle-iters", "99999999999999999999", "--oracle-iters must be <= 2147483647"),
    ("--oracle-iters", "0", "--oracle-iters must be >= 1, got 0"),
    ("--repeats", "x", "argument --repeats: expected an integer, got 'x'"),
])
def test_eval_ranges_checked_up_front(flag, value, message):
    _usage_error(run_cli("eval", "--net", "oracle", flag, value), message)


@pytest.mark.parametrize("args, message", [
    (["solve", "solver.iterations=0"], "--iters must be >= 1, got 0 (solver.iterations)"),
    (["eval", "search.iterations=0"], "--iters must be >= 1, got 0 (search.iterations)"),
    (["eval", "search.threads=1000"], "--threads must be <= 256, got 1000 (search.threads)"),
    (["eval", "search.solver=lcfr+"], "--solver must be one of cfr, lcfr, cfr+, dcfr, fp, lfp, flop, cfr-avg, "
                                      "cfr-avg-modified, cfr-avg-play-avg, cfr-avg-modified-play-avg, "
                                      "got 'lcfr+' (search.solver)"),
])
def test_config_values_get_the_flags_message_with_their_key(args, message):
    _usage_error(run_cli(*args), message)


# ------------------------------------------------------------------- output files


def _bad_outputs(tmp_path):
    folder = tmp_path / "folder.json"
    folder.mkdir()
    return [
        ("/proc/p.json", "cannot be written"),
        (str(folder), "is a directory"),
        (str(tmp_path / ("x" * 250 + ".json")), "cannot be written: File name too long"),
        (str(tmp_path / "missing" / "p.json"), "does not exist"),
    ]


@pytest.mark.parametrize("command", ["solve", "eval"])
def test_policy_out_checked_before_computing(command, tmp_path):
    # 2**31 - 1 iterations would run for hours: an answer within the timeout proves the
    # path was checked first.
    for path, message in _bad_outputs(tmp_path):
        proc = run_cli(command, "--iters", "2147483647", *FAST[command], "--policy-out", path, timeout=60)
        _usage_error(proc, message)
        assert path in proc.stderr


@pytest.mark.parametrize("command", ["solve", "eval"])
def test_a_failing_write_after_computing_keeps_the_result(command, tmp_path, monkeypatch, capsys):
    """The folder passes the check, then vanishes during the computation: the numbers are
    printed, the policy is written to a temporary file named on stderr, the status is 1."""
    import rebel.interop.policy_io as policy_io

    target = tmp_path / "gone" / "p.json"
    target.parent.mkdir()
    real_save = policy_io.save_policy

    def save(path, *a, **k):
        if str(path) == str(target):
            raise FileNotFoundError(2, "No such file or directory")
        return real_save(path, *a, **k)

    monkeypatch.setattr(policy_io, "save_policy", save)
    args = [command, "--game", "kuhn", "--iters", "64", *FAST[command], "--json", "--policy-out", str(target)]
    assert main(args) == cli_common.EXIT_OUTPUT
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert "policy_out" not in report
    assert err.startswith(f"rebel {command}: error: could not write --policy-out '{target}' "
                          "(No such file or directory)")
    kept = err.strip().rsplit(" ", 1)[1]
    loaded = load_policy(kept)
    os.unlink(kept)
    value = rebel.exploitability(loaded.game, loaded.tree, loaded.policy)["exploitability"]
    expected = report["exploitability"] if command == "solve" else report["mode_b"][-1]["exploitability"]
    assert value == expected


# ------------------------------------------------------------------ flags and help


@pytest.mark.parametrize("command", ["solve", "eval", "score", "games", "train"])
def test_verbose_after_the_subcommand(command):
    parser = build_parser()
    rest = {"score": ["p.json"], "train": ["quick"]}.get(command, [])
    args = parser.parse_args([command, *rest, "-vv"])
    assert args.verbose + args.sub_verbose == 2
    args = parser.parse_args(["-v", command, *rest, "-v"])
    assert args.verbose + args.sub_verbose == 2


def test_eval_verbose_logs(tmp_path):
    proc = run_cli("eval", "-v", "--game", "kuhn", "--iters", "16", *FAST["eval"])
    assert proc.returncode == 0, proc.stderr
    assert "INFO rebel.search.evaluate: mode (b), 1 policies" in proc.stderr


@pytest.mark.parametrize("command", ["solve", "eval", "score", "games", "train"])
def test_help_style(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "``" not in text and "::" not in text
    assert "\nexamples:\n  rebel " in text
    if command in ("solve", "eval"):
        parser = build_parser()
        sub = parser._subparsers._group_actions[0].choices[command]
        for action in sub._actions:
            if action.option_strings and action.dest not in ("help", "sub_verbose", "config"):
                assert "default " in (action.help or ""), (command, action.option_strings)


@pytest.mark.parametrize("override, message", [
    ("evaluation.repeats=99999999999", "evaluation.repeats must be <= 2147483647, got 99999999999"),
    ("evaluation.threads=1000", "evaluation.threads must be <= 256, got 1000"),
    ("selfplay.seed=99999999999999999999999", "selfplay.seed must be <= 18446744073709551615"),
    ("search.depth=3000000000", "search.depth must be <= 2147483647, got 3000000000"),
])
def test_train_ranges_checked_before_the_run_starts(override, message, tmp_path):
    proc = run_cli("train", "quick", override, f"run.dir={tmp_path}", "--json")
    _usage_error(proc, message)
    assert list(tmp_path.iterdir()) == []  # no run directory was made
