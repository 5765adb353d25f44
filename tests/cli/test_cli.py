"""The ``rebel`` command line: ``solve`` (JSON output, policy files, configs) and ``games``."""
from __future__ import annotations

import json

import pytest
import yaml
from conftest import REPO_ROOT, liars_dice, run_cli, solved

import rebel
from rebel.cli import build_parser, main
from rebel.config.solve import DEFAULTS, ConfigError, load_solve_config
from rebel.interop.policy_io import load_policy
from rebel.search.solve import SOLVERS


def test_solve_json_matches_direct_solve(tmp_path):
    out = tmp_path / "policy.json"
    proc = run_cli("solve", "--game", "liars_dice", "--dice", "1", "--faces", "4", "--solver", "lcfr",
                   "--iters", "256", "--json", "--policy-out", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1  # exactly one JSON object
    report = json.loads(lines[0])
    direct = solved(liars_dice(1, 4), "lcfr", 256)
    assert report["game"] == {"name": "liars_dice", "num_dice": 1, "num_faces": 4}
    assert (report["solver"], report["iterations"]) == ("lcfr", 256)
    assert report["exploitability"] == direct.exploitability  # deterministic and repr-exact
    assert report["br_values"] == list(direct.br_values)
    assert report["game_value"] == direct.game_value
    assert 0 < report["seconds"] < 60
    assert report["policy_out"] == str(out)
    loaded = load_policy(out, expected_game=liars_dice(1, 4))
    assert rebel.exploitability(loaded.game, loaded.tree, loaded.policy)["exploitability"] == report["exploitability"]


def test_solve_kuhn_npz_policy(tmp_path):
    out = tmp_path / "kuhn.npz"
    proc = run_cli("solve", "--game", "kuhn", "--solver", "cfr+", "--iters", "2000", "--json", "--policy-out", str(out))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["game"] == {"name": "kuhn"}
    assert abs(report["game_value"] + 1 / 18) < 1e-3
    loaded = load_policy(out)
    assert rebel.exploitability(loaded.game, loaded.tree, loaded.policy)["exploitability"] == report["exploitability"]


@pytest.mark.parametrize("solver", SOLVERS)
def test_every_solver_selectable(solver, capsys):
    assert main(["solve", "--solver", solver, "--iters", "64", "--json", "--no-progress"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["solver"] == solver
    assert report["exploitability"] == solved(liars_dice(1, 4), solver, 64).exploitability


def test_solver_options(capsys):
    assert main(["solve", "--solver", "dcfr", "--iters", "64", "--dcfr-alpha", "2", "--dcfr-gamma", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dcfr"] == {"alpha": 2.0, "beta": 0.0, "gamma": 3.0}
    assert main(["solve", "--solver", "lfp", "--optimistic", "--iters", "64", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["optimistic"] is True


def test_table_output(capsys):
    assert main(["solve", "--game", "kuhn", "--iters", "100"]) == 0
    out = capsys.readouterr().out
    assert "exploitability" in out and "kuhn()" in out


def test_games_command(capsys):
    assert main(["games"]) == 0
    out = capsys.readouterr().out
    assert "kuhn" in out and "liars_dice" in out and "num_faces=4" in out
    assert main(["games", "--json"]) == 0
    names = [g["name"] for g in json.loads(capsys.readouterr().out)["games"]]
    assert names == ["kuhn", "leduc", "leduc_nolimit", "liars_dice", "mnk"]


def test_help_and_subcommand_registry():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"solve", "games"} <= set(sub.choices)
    proc = run_cli("solve", "--help")
    assert proc.returncode == 0 and "--policy-out" in proc.stdout


# ------------------------------------------------------------------------------ configs

def test_config_file_matches_builtin_defaults():
    with open(REPO_ROOT / "configs" / "solve.yaml") as f:
        assert yaml.safe_load(f) == DEFAULTS


def test_config_layers(tmp_path):
    cfg = load_solve_config(str(REPO_ROOT / "configs" / "solve.yaml"), ["solver.iterations=32", "game.num_faces=5"],
                            {"solver": {"name": "cfr+"}})
    assert cfg.game.as_dict() == {"name": "liars_dice", "num_dice": 1, "num_faces": 5}
    assert (cfg.solver.name, cfg.solver.iterations) == ("cfr+", 32)
    # Switching games starts from the new game's defaults.
    assert load_solve_config(None, ["game.name=kuhn"]).game.as_dict() == {"name": "kuhn"}
    path = tmp_path / "c.yaml"
    path.write_text("game: {name: kuhn}\nsolver: {name: dcfr, dcfr_alpha: 2}\n")
    cfg = load_solve_config(str(path), [], {"game": {"name": "liars_dice", "num_dice": 2, "num_faces": 3}})
    assert cfg.game.as_dict() == {"name": "liars_dice", "num_dice": 2, "num_faces": 3}
    assert cfg.solver.dcfr_alpha == 2.0 and cfg.solver.iterations == 1024


@pytest.mark.parametrize("text,message", [
    ("solvr: {name: lcfr}\n", "unknown config section\\(s\\) 'solvr'"),
    ("solver: {iters: 3}\n", "unknown config key 'solver.iters'"),
    ("output: {jsn: true}\n", "unknown config key 'output.jsn'"),
    ("game: {name: liars_dice, dice: 2}\n", "unknown config key 'game.dice'"),
    ("solver: {iterations: many}\n", "could not be converted to Integer"),
    ("[1, 2]\n", "must hold a mapping"),
    ("solver: {name: lcfr\n", "not valid YAML"),
])
def test_bad_config_files(tmp_path, text, message):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_solve_config(str(path))


def test_cli_config_file_and_overrides(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("game: {name: liars_dice, num_dice: 1, num_faces: 3}\nsolver: {name: cfr, iterations: 8}\n")
    proc = run_cli("solve", "--config", str(path), "solver.iterations=16", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["game"]["num_faces"] == 3 and report["iterations"] == 16 and report["solver"] == "cfr"
    path.write_text("solver: {bogus: 1}\n")
    proc = run_cli("solve", "--config", str(path))
    assert proc.returncode == 2
    assert "unknown config key 'solver.bogus'" in proc.stderr and "Traceback" not in proc.stderr
