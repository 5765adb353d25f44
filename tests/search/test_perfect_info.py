"""ReBeL's test-time search on perfect-information games (the m,n,k game): the exact
mode-(b) limit of rebel._core.PerfectInfoSearch against the sampled evaluation of
TestTimeSearch, against exact leaf values, and through `rebel eval` and `rebel train`."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import run_cli

from rebel import _core
from rebel.nets.value_mlp import ValueMLP, to_native


def mnk(m: int, n: int, k: int) -> _core.Game:
    return _core.make_game("mnk", {"m": m, "n": n, "k": k})


def random_net(game: _core.Game, seed: int = 0) -> _core.ValueNet:
    torch.manual_seed(seed)
    return to_native(ValueMLP.for_game(game, hidden=32, layers=1), game, precision="fp32")


def own_reach(tree: _core.PublicTree, policy: np.ndarray) -> np.ndarray:
    """Reach of the player acting at each node's parent, by its own actions only."""
    parent, player = np.asarray(tree.parent), np.asarray(tree.player)
    reach = np.ones((len(parent), 2))
    for c in range(1, len(parent)):
        reach[c] = reach[parent[c]]
        reach[c, player[parent[c]]] *= policy[c, 0]
    return np.array([reach[parent[c], player[parent[c]]] if c else 0.0 for c in range(len(parent))])


def test_only_one_hand_games_with_identifying_features_are_perfect_information():
    assert mnk(3, 3, 3).perfect_information
    assert not _core.make_game("kuhn", {}).perfect_information
    assert not _core.make_game("liars_dice", {"num_dice": 1, "num_faces": 3}).perfect_information
    kuhn = _core.make_game("kuhn", {})
    with pytest.raises(ValueError, match="one hand per player"):
        _core.PerfectInfoSearch(kuhn, _core.ZeroNet(kuhn))


def test_tic_tac_toe_has_2423_distinct_search_states_for_180361_search_roots():
    search = _core.PerfectInfoSearch(mnk(3, 3, 3), _core.ZeroNet(mnk(3, 3, 3)), depth=2, iterations=2)
    assert (search.num_states, search.num_search_roots) == (2423, 180361)


@pytest.mark.parametrize("shape", [(2, 3, 2), (2, 3, 3)])
def test_the_exact_limit_is_what_sampled_mode_b_converges_to(shape):
    """TestTimeSearch's reach-weighted average of N sampled policies approaches the limit
    policy as N grows (the error falls roughly as 1/sqrt(N)), and its exploitability with it.
    Compared where the acting player reaches the node itself with probability > 0.05: where
    it never does, the average is arbitrary (uniform) and matters to no best response, and
    where it rarely does, few samples count."""
    game = mnk(*shape)
    net = random_net(game)
    limit = _core.PerfectInfoSearch(game, net, "lcfr", 2, 64).evaluate(threads=2)
    sampled = _core.TestTimeSearch(game, net, "lcfr", 2, 64)
    reached = own_reach(sampled.full_tree, limit["policy"]) > 0.05
    errors = []
    for n in (64, 1024):
        result = sampled.evaluate_sampled(n, threads=2, seed=3)
        errors.append(float(np.abs(result["average_policy"] - limit["policy"])[reached].max()))
    assert errors[1] < errors[0], errors
    assert errors[1] < 0.006, errors
    assert abs(result["exploitability"][-1] - limit["exploitability"]) < 0.005


def test_one_search_deep_enough_for_the_whole_game_is_the_linear_mix_of_iterates():
    """depth >= the game's length: one search at the root; with T = 2 only iteration 0
    (the uniform policy) can be drawn."""
    game = mnk(2, 3, 3)
    search = _core.PerfectInfoSearch(game, None, "lcfr", 6, 2)
    assert search.num_states == 1
    result = search.evaluate()
    tree = _core.build_tree(game)
    uniform = _core.exploitability(game, tree, _core.uniform_policy(game, tree))
    assert result["exploitability"] == pytest.approx(uniform["exploitability"], abs=1e-12)


def test_exact_leaf_values_give_near_optimal_play():
    """With the oracle (exact subgame values) at the leaves, depth-2 search plays 2x3 k3
    (a draw) almost unexploitably, and the zero net does not."""
    game = mnk(2, 3, 3)
    oracle = _core.PerfectInfoSearch(game, _core.OracleNet(game, iterations=256), "lcfr", 2, 256).evaluate()
    zero = _core.PerfectInfoSearch(game, _core.ZeroNet(game), "lcfr", 2, 256).evaluate()
    assert oracle["exploitability"] < 0.01
    assert zero["exploitability"] > 0.1


def test_the_result_does_not_depend_on_the_thread_count():
    game = mnk(3, 3, 3)
    search = _core.PerfectInfoSearch(game, random_net(game, 1), "lcfr", 2, 16)
    one, two = search.evaluate(threads=1), search.evaluate(threads=2)
    assert np.array_equal(one["policy"], two["policy"])
    assert one["exploitability"] == two["exploitability"]


def test_a_one_hand_subgame_asks_the_net_once_per_leaf_and_player():
    """The beliefs of a one-hand game never change, so later iterations reuse the answers."""
    game = mnk(3, 3, 3)
    tree = _core.build_tree(game, [], 2)
    solver = _core.SubgameSolver(game, tree, solver="lcfr", net=random_net(game))
    solver.run(64)
    leaves = len(tree.pseudo_leaves)
    assert 0 < solver.leaf_queries <= 2 * leaves


def test_rebel_eval_reports_the_limit_on_a_perfect_information_game():
    args = ("eval", "--game", "mnk", "--m", "2", "--n", "3", "--k", "3", "--iters", "64")
    result = run_cli(*args, "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["mode_b"] == [] and 0 <= summary["mode_b_limit"]["exploitability"] <= 1
    assert summary["search_states"] < summary["search_roots"]
    text = run_cli(*args)
    assert text.returncode == 0, text.stderr
    assert "N ->   inf" in text.stdout


@pytest.mark.slow
def test_rebel_learns_tic_tac_toe(tmp_path):
    """The shipped config for 500 epochs (the committed run was at or below 0.01 from epoch
    350 on): the final net's search is at most 0.01 exploitable, against 0.70 for the zero
    net. One self-play thread makes the run a deterministic function of the seed, so a loaded
    machine cannot change the outcome (with two threads one run under CPU contention ended at
    0.33). Measured with one thread: 0.00004 in 20 minutes on a loaded 2-core machine."""
    r = run_cli("train", "--json", "rebel_tictactoe", "selfplay.threads=1", f"run.dir={tmp_path}", "run.name=ttt",
                "run.epochs=500", "run.max_minutes=null", "evaluation.every=0", timeout=2400)
    assert r.returncode == 0, r.stderr
    final = json.loads(r.stdout.splitlines()[-1])
    assert final["evaluation"]["eval_limit"] and final["evaluation"]["exploitability"] <= 0.01, final["evaluation"]


# ------------------------------------------------------------------------------ ReBeL as a player

REBEL_TTT = Path(__file__).resolve().parents[2] / "experiments" / "results" / "mnk" / "rebel_tictactoe" / "weights.bin"


def test_rebel_player_specs_and_bad_input(tmp_path):
    from rebel.alphazero.players import ReBeLPlayer, make_player

    player = make_player(f"rebel:{REBEL_TTT}:64", 3, 3, 3)
    assert isinstance(player, ReBeLPlayer) and player.iterations == 64
    with pytest.raises(ValueError, match="ITERS an integer"):
        make_player(f"rebel:{REBEL_TTT}:many", 3, 3, 3)
    with pytest.raises(ValueError):
        make_player(f"rebel:{REBEL_TTT}", 4, 4, 4)  # a tic-tac-toe net on a 4x4 board
    with pytest.raises(ValueError):
        make_player(f"rebel:{tmp_path / 'missing.bin'}", 3, 3, 3)


def test_the_trained_rebel_net_beats_random_and_draws_the_perfect_player():
    """The committed run's net (experiments/results/mnk/rebel_tictactoe), playing as its
    evaluation does: it wins most games against random moves and loses none of four
    against the exact solver."""
    from rebel.alphazero.match import play_match
    from rebel.alphazero.players import PerfectPlayer, RandomPlayer, ReBeLPlayer

    rebel_player = ReBeLPlayer(str(REBEL_TTT), 3, 3, 3, iterations=256, seed=0)
    against_random = play_match(rebel_player, RandomPlayer(1), 3, 3, 3, games=10)
    assert against_random.score >= 0.7, against_random
    against_perfect = play_match(rebel_player, PerfectPlayer(3, 3, 3, seed=2), 3, 3, 3, games=4)
    assert against_perfect.losses == 0, against_perfect
