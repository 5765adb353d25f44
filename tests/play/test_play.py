"""`rebel play`: the deal follows the game's chance distribution, payoffs are the game's, the
bot plays its sampled search policy and the beliefs it shows are Bayes' rule on that policy;
the command runs from a pipe, asks again on wrong input and ends cleanly at EOF."""
from __future__ import annotations

import numpy as np
import pytest

from rebel import _core
from rebel.play.cards import Score, Table, display_action, parse_action
from tests.conftest import kuhn, liars_dice, run_cli


def _table(game, seed=0, iterations=64):
    return Table(game, _core.OracleNet(game, "lcfr", 64, "root_mean"), iterations=iterations, seed=seed)


def test_kuhn_deals_follow_the_chance_distribution():
    t = _table(kuhn())
    counts = np.zeros((3, 3))
    for _ in range(3000):
        h0, h1 = t.deal()
        counts[h0, h1] += 1
    assert np.all(np.diag(counts) == 0)                      # no two equal cards
    off = counts[~np.eye(3, dtype=bool)] / counts.sum()
    assert np.all(np.abs(off - 1 / 6) < 0.03)                # the six deals equally likely


@pytest.mark.parametrize("history, hands, payoff0", [
    ([1, 0], (0, 2), 1.0),       # bet, fold: player 0 wins the ante whatever the cards
    ([0, 1, 0], (2, 0), -1.0),   # pass, bet, fold: player 0 loses 1
    ([0, 0], (2, 1), 1.0),       # showdown of antes: K beats Q
    ([1, 1], (0, 1), -2.0),      # bet, call: J loses 2 to Q
    ([0, 1, 1], (1, 0), 2.0),    # pass, bet, call: Q beats J for 2
])
def test_kuhn_payoffs_are_the_games(history, hands, payoff0):
    t = _table(kuhn())
    t.hands, t.history, t.policy = hands, [], np.ones((len(t.tree), 3))
    for a in history:
        t.play(a)
    assert t.finished
    assert t.payoff(0) == payoff0 and t.payoff(1) == -payoff0


def test_liars_dice_payoff_and_illegal_moves():
    game = liars_dice(1, 4)
    t = _table(game)
    t.new_hand()
    t.hands = (3, 1)           # player 0 holds the wild face 3, player 1 a 1
    t.play(1)                  # bid 1 x 1: true (player 1's own die)
    t.play(8)                  # liar: the caller (player 1) loses
    assert t.payoff(1) == -1.0 and t.payoff(0) == 1.0
    with pytest.raises(ValueError):
        t.play(0)              # the hand is over


def test_bot_plays_its_sampled_policy_and_beliefs_are_bayes_rule():
    t = _table(kuhn(), seed=5)
    t.new_hand()
    policy = t.policy
    t.hands = (1, 0)           # player 0 (the bot here) holds Q, player 1 holds J
    probs = t.bot_action_probs()
    children = range(int(t.tree.first_child[0]), int(t.tree.first_child[0]) + int(t.tree.num_children[0]))
    expected = {int(t.tree.action[c]): policy[c, 1] for c in children}
    total = sum(expected.values())
    assert probs == pytest.approx({a: p / total for a, p in expected.items()})
    t.play(1)                  # player 0 bets
    # Player 0's hand given the bet, from player 1's seat (holding J): prior x weight x P(bet | hand).
    bet_child = next(c for c in children if int(t.tree.action[c]) == 1)
    raw = np.array([0.0, policy[bet_child, 1], policy[bet_child, 2]])
    assert t.belief_about(0) == pytest.approx(raw / raw.sum())
    action = t.bot_move()      # player 1's move drawn from its policy (always legal)
    assert action in (0, 1)


def test_score_interval():
    s = Score()
    assert s.mean_and_interval()[1] == float("inf")
    for x in (1, -1, 2, 0):
        s.add(x)
    mean, half = s.mean_and_interval()
    assert mean == 0.5 and half == pytest.approx(1.96 * np.std([1, -1, 2, 0], ddof=1) / 2)
    assert "after 4 hands" in s.line()


def test_actions_parse_by_number_and_name():
    game = liars_dice(1, 4)
    legal = [0, 1, 5, 8]
    assert display_action(game, 5) == "bid 2 x 1" and display_action(game, 8) == "liar"
    assert parse_action(game, legal, "3") == 5
    assert parse_action(game, legal, "bid 2 x 1") == 5 and parse_action(game, legal, "2x1") == 5
    assert parse_action(game, legal, " LIAR ") == 8
    assert parse_action(game, legal, "5") is None and parse_action(game, legal, "bid 2 x 3") is None
    assert parse_action(game, legal, "") is None


def test_play_from_a_pipe_asks_again_and_ends_at_eof():
    r = run_cli_input(["play", "--game", "kuhn", "--net", "oracle", "--iters", "64", "--seed", "3", "--seat", "1",
                       "--explain"], "nonsense\n1\n2\n2\n")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "not a legal action here: 'nonsense'" in out
    assert "hands: you" in out and "final score after" in out and "(end of input)" in out
    assert "the bot's probabilities" in out


def test_play_a_fixed_number_of_hands():
    r = run_cli_input(["play", "--game", "kuhn", "--net", "zero", "--iters", "16", "--seed", "1", "--hands", "2"],
                      "1\n1\n1\n1\n1\n1\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("--- hand") == 2 and "final score after 2 hands" in r.stdout


@pytest.mark.parametrize("args, message", [
    (["--net", "/no/such/file"], "is not a file"),
    (["--game", "kuhn", "--dice", "2"], "--dice does not apply to kuhn"),
    (["--game", "chess"], "chess"),
    (["--hands", "-1"], "--hands must be >= 0"),
    (["--seat", "2"], "invalid choice"),
    (["--game", "kuhn", "--net", "pretrained:1x4f"], "--net"),           # a net for another game
    (["--net", "pretrained:chess"], "no pretrained net 'chess'; available: "),
])
def test_play_bad_input_exits_2(args, message):
    r = run_cli("play", *args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def run_cli_input(args, text):
    import os
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.run([sys.executable, "-m", "rebel", *args], input=text, capture_output=True, text=True,
                          timeout=120, env=env, cwd=REPO_ROOT)
