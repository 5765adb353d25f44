"""The shipped nets: each loads for its game, is small, and evaluates to its listed check
within the spread of its listed exploitability; `--net pretrained:NAME` works in eval and
play (with the net's own game) and `rebel pretrained` lists them."""
from __future__ import annotations

import json

import pytest

from rebel import _core
from rebel.nets.pretrained import available, get, resolve_net
from rebel.search.evaluate import evaluate
from rebel.search.settings import EvalSettings
from tests.conftest import run_cli

NETS = available()


def test_the_expected_nets_ship():
    assert {"kuhn", "quick"} <= {n.name for n in NETS}


@pytest.mark.parametrize("net", NETS, ids=[n.name for n in NETS])
def test_each_net_loads_and_matches_its_listed_check(net):
    assert net.path.is_file() and net.path.stat().st_size < 1_000_000
    game = _core.make_game(net.game["name"], net.game_params())
    _core.MlpValueNet(game, str(net.path))  # fits its game
    e, c = net.exploitability, net.check
    assert e["min"] <= e["mean"] <= e["max"] and len(e["seeds"]) >= 3
    settings = EvalSettings(net=f"pretrained:{net.name}", solver=e["solver"], depth=e["depth"],
                            iterations=e["iterations"], repeats=c["repeats"],
                            threads=2, seed=c["seed"], precision=c["precision"], mode_a=False, full_game=False)
    value = evaluate(game, settings)["mode_b"][-1]["exploitability"]
    # Same seed and precision: equal up to the kernel's summation order on this CPU.
    assert value == pytest.approx(c["exploitability"], abs=max(1e-6, 0.05 * (e["max"] - e["min"])))


def test_unknown_names_are_refused_with_the_list():
    with pytest.raises(ValueError, match="available: "):
        get("no-such-net")
    assert resolve_net("oracle") == "oracle"
    r = run_cli("eval", "--net", "pretrained:no-such-net")
    assert r.returncode == 2 and "no pretrained net 'no-such-net'" in r.stderr


def test_pretrained_nets_in_eval_play_and_the_list():
    r = run_cli("pretrained", "--json")
    assert r.returncode == 0, r.stderr
    listed = json.loads(r.stdout)
    assert [n["name"] for n in listed] == [n.name for n in NETS]
    assert "reproduce" in run_cli("pretrained").stdout
    # eval takes the net's own game (Kuhn) without --game.
    ev = run_cli("eval", "--net", "pretrained:kuhn", "--iters", "64", "--repeats", "4", "--no-mode-a", "--json")
    assert ev.returncode == 0, ev.stderr
    assert json.loads(ev.stdout)["game"]["name"] == "kuhn"
