"""The shipped nets: each loads for its game, is small, and evaluates to its listed check
within the spread of its listed exploitability; `--net pretrained:NAME` works in eval and
play (with the net's own game) and `rebel pretrained` lists them."""
from __future__ import annotations

import json

import pytest

from rebel import _core
from rebel.nets.pretrained import available, available_policies, get, get_policy, resolve_net
from rebel.search.evaluate import evaluate
from rebel.search.settings import EvalSettings
from tests.conftest import run_cli

NETS = available()
POLICIES = available_policies()


def test_the_expected_nets_ship():
    assert {"kuhn", "quick", "1x4f", "1x5f", "2x3f", "leduc", "leduc_nolimit"} <= {n.name for n in NETS}


@pytest.mark.parametrize("net", NETS, ids=[n.name for n in NETS])
def test_each_net_loads_and_matches_its_listed_check(net):
    # Small enough to ship in the package: the largest, no-limit Leduc's 3x512 MLP in float32, is 2.2 MB.
    assert net.path.is_file() and net.path.stat().st_size < 2_500_000
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
    assert [n["name"] for n in listed if n["kind"] == "value"] == [n.name for n in NETS]
    assert [n["name"] for n in listed if n["kind"] == "policy"] == [p.name for p in POLICIES]
    assert "reproduce" in run_cli("pretrained").stdout
    # eval takes the net's own game (Kuhn) without --game.
    ev = run_cli("eval", "--net", "pretrained:kuhn", "--iters", "64", "--repeats", "4", "--no-mode-a", "--json")
    assert ev.returncode == 0, ev.stderr
    assert json.loads(ev.stdout)["game"]["name"] == "kuhn"


def test_the_expected_policy_nets_ship():
    assert {"1x4f-policy", "2x3f-policy"} <= {p.name for p in POLICIES}


@pytest.mark.parametrize("policy", POLICIES, ids=[p.name for p in POLICIES])
def test_each_policy_net_loads_and_matches_its_listed_check(policy):
    """A shipped policy net is a policy net of its game, paired with a shipped value net of
    the same game; its small check (the listed warm-start search, N = 16) is recomputed."""
    assert policy.path.is_file() and policy.path.stat().st_size < 1_000_000
    game = _core.make_game(policy.game["name"], policy.game_params())
    _core.MlpPolicyNet(game, str(policy.path))  # fits its game
    value_net = get(policy.value_net)
    assert value_net.game == policy.game
    e, c, s = policy.exploitability, policy.check, policy.search
    assert e["min"] <= e["mean"] <= e["max"] and len(e["seeds"]) >= 3 and s["warm_start"] > 0
    settings = EvalSettings(net=f"pretrained:{policy.value_net}", solver=s["solver"], depth=s["depth"],
                            iterations=s["iterations"], repeats=c["repeats"], threads=2, seed=c["seed"],
                            precision=c["precision"], off_path=s["off_path"], mode_a=False, full_game=False,
                            warm_start=s["warm_start"], warm_prior=s["warm_prior"],
                            policy_net=f"pretrained:{policy.name}")
    value = evaluate(game, settings)["mode_b"][-1]["exploitability"]
    assert value == pytest.approx(c["exploitability"], abs=max(1e-6, 0.05 * (e["max"] - e["min"])))


def test_value_and_policy_nets_are_not_mixed_up():
    """A policy net given as --net, or a value net as --policy-net, is refused naming the
    flag to use (exit 2 on the CLI)."""
    with pytest.raises(ValueError, match="pretrained:1x4f-policy is a policy net; give it as --policy-net"):
        get("1x4f-policy")
    with pytest.raises(ValueError, match="pretrained:1x4f is a value net, not a policy net; give it as --net"):
        get_policy("1x4f")
    with pytest.raises(ValueError, match="no pretrained policy net 'nope'; available: 1x4f-policy"):
        get_policy("nope")
    r = run_cli("eval", "--net", "pretrained:1x4f-policy")
    assert r.returncode == 2 and "is a policy net; give it as --policy-net" in r.stderr
    r = run_cli("eval", "--net", "pretrained:1x4f", "--policy-net", "pretrained:1x4f", "--warm-start", "15")
    assert r.returncode == 2 and "--policy-net: pretrained:1x4f is a value net" in r.stderr


def test_a_pretrained_policy_net_warm_starts_rebel_eval():
    """`rebel eval --policy-net pretrained:1x4f-policy` is the listed check's search: the
    same figure as the core with the policy file itself."""
    (policy,) = [p for p in POLICIES if p.name == "1x4f-policy"]
    s = policy.search
    r = run_cli("eval", "--net", "pretrained:1x4f", "--policy-net", "pretrained:1x4f-policy",
                "--warm-start", str(s["warm_start"]), "--warm-prior", str(s["warm_prior"]),
                "--iters", str(s["iterations"]), "--depth", str(s["depth"]), "--repeats", "16", "--seed", "0",
                "--precision", "fp32", "--threads", "2", "--no-mode-a", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["mode_b"][-1]["exploitability"] == pytest.approx(policy.check["exploitability"], abs=1e-9)



#: The shipped nets whose listed figure is a row of the results index (experiments/results/index.json).
RESULTS_ROWS = {"1x4f": "table2.1x4f.cfr", "1x5f": "table2.1x5f.cfr", "2x3f": "table2.2x3f.cfr",
                "leduc": "leduc.limit.trained", "leduc_nolimit": "leduc_nolimit.trained",
                "2x3f-policy": "warm_start.2x3f.warm_T256_P10"}


def test_a_shipped_nets_figure_is_the_results_indexs():
    """`rebel pretrained` and the README give one figure for one net: the same seeds and values
    (the fp32 net's, which every shipped figure is)."""
    from tests.conftest import REPO_ROOT

    index = json.loads((REPO_ROOT / "experiments" / "results" / "index.json").read_text())
    rows = {r["id"]: r for r in (index["rows"] if isinstance(index, dict) else index)}
    shipped = {n.name: n.exploitability for n in NETS} | {p.name: p.exploitability for p in POLICIES}
    for name, row_id in RESULTS_ROWS.items():
        listed, row = shipped[name], rows[row_id]
        assert listed["precision"] == "fp32", name
        assert listed["seeds"] == row["seeds"] and listed["values"] == pytest.approx(row["values"], rel=1e-12), name
