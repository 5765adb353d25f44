"""`rebel play`: the deal follows the game's chance distribution, payoffs are the game's, the
bot plays its sampled search policy and the beliefs it shows are Bayes' rule on that policy
(and the search's fallback after an action the policy never takes); Liar's Dice faces read
1..F with the wild face marked; the score shows an interval only from 10 hands; the command
runs from a pipe, asks again on wrong input and ends cleanly at EOF."""
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
    s.add(-1)
    s.add(-1)  # two lost hands: no interval of zero width
    assert s.mean_and_interval() == (-1.0, float("inf"))
    assert s.line() == "after 2 hands: you -2 in all, -1.000 per hand (2 hands, too few for an interval)"
    payoffs = [1, -1, 2, 0, 1, 1, -2, 1, 0, 2]
    s = Score()
    for x in payoffs[:9]:
        s.add(x)
    assert "too few for an interval" in s.line()
    s.add(payoffs[9])
    mean, half = s.mean_and_interval()
    # Student's t with 9 degrees of freedom: 2.262, not the normal 1.96.
    assert mean == pytest.approx(0.5) and half == pytest.approx(2.2621571628 * np.std(payoffs, ddof=1) / np.sqrt(10))
    assert s.line().endswith(f"+0.500 per hand +- {half:.3f} (95%)") and "after 10 hands" in s.line()


def test_actions_parse_by_number_and_name():
    game = liars_dice(1, 4)
    legal = [0, 1, 3, 5, 8]   # ids: bid (q-1)*F + f with faces f = 0..3 inside, liar = 8
    assert [display_action(game, a) for a in legal] == ["bid 1 x 1", "bid 1 x 2", "bid 1 x 4", "bid 2 x 2", "liar"]
    assert parse_action(game, legal, "4") == 5
    assert parse_action(game, legal, "bid 2 x 2") == 5 and parse_action(game, legal, "2x2") == 5
    assert parse_action(game, legal, "bid 1 x 4") == 3 and parse_action(game, legal, "1 x 4*") == 3  # the wild face
    assert parse_action(game, legal, " LIAR ") == 8
    assert parse_action(game, legal, "6") is None and parse_action(game, legal, "bid 2 x 3") is None
    assert parse_action(game, legal, "bid 1 x 0") is None  # faces are 1..4
    assert parse_action(game, legal, "") is None


def test_liars_dice_hands_and_the_wild_face_read_1_to_f():
    from rebel.games.names import hand_label, rules_note

    game = liars_dice(1, 4)
    assert [hand_label(game, h) for h in range(4)] == ["1", "2", "3", "4*"]
    assert [game.hand_name(h) for h in range(4)] == ["0", "1", "2", "3"]  # the core's names are the ids
    assert "4s are wild (shown as 4*)" in rules_note(game)
    assert hand_label(liars_dice(2, 3), 2 + 0 * 3) == "3* 1"   # die 0 shows 2 (wild), die 1 shows 0
    assert hand_label(kuhn(), 2) == "K" and rules_note(kuhn()) == ""


def _off_path_table(depth, off_path="skip"):
    """1x4f with the bot in seat 1 and a policy that never bids 1 x 4 (id 3) first."""
    game = liars_dice(1, 4)
    t = Table(game, _core.ZeroNet(game), depth=depth, iterations=4, seed=0, off_path=off_path)
    t.new_hand()
    t.hands = (2, 1)
    t.policy = np.full_like(t.policy, 0.5)
    t.policy[t._child(3)] = 0.0
    return t


def test_belief_after_an_off_path_action_is_the_searchs_fallback():
    t = _off_path_table(depth=2)
    t.play(3)                    # player 0 bids 1 x 4: no hand of the policy does
    t.play(4)                    # the bot bids 2 x 1; the next search starts here (depth 2)
    b = t.belief(0)
    assert b.off_path == [0] and b.restarted
    assert b.probs == pytest.approx(np.full(4, 0.25))            # skip: every hand equally likely
    t.play(6)                    # bid 2 x 3 with probability 0.5 for every hand: still uniform
    t.play(7)
    assert t.belief(0).off_path == [0] and t.belief_about(0) == pytest.approx(np.full(4, 0.25))


def test_no_belief_before_the_next_search_after_an_off_path_action():
    t = _off_path_table(depth=3)
    t.play(3)
    t.play(4)                    # depth 3: the bot is still in the subgame solved at the root
    b = t.belief(0)
    assert b.off_path == [0] and not b.restarted and not b.probs.any()
    t.play(5)
    t.play(6)                    # 3 actions: the search restarted from the uniform belief, then x P(bid 2 x 2)
    b = t.belief(0)
    assert b.restarted and b.probs == pytest.approx(np.full(4, 0.25))


@pytest.mark.parametrize("off_path, expected", [
    ("skip", [0.25, 0.25, 0.25, 0.25]),               # no hand left: the uniform fallback
    ("conditional", [1 / 3.5, 1 / 3.5, 0.5 / 3.5, 1 / 3.5]),  # every hand one tremble: their weights
])
def test_off_path_modes_restart_from_their_own_beliefs(off_path, expected):
    t = _off_path_table(depth=4, off_path=off_path)
    t.policy[t._child(0)] = [1.0, 1.0, 0.0, 0.0]      # bid 1 x 1 with the hands 1 and 2 only
    t.play(0)
    t.play(1)
    t.policy[t._child(2)] = [0.0, 0.0, 0.5, 1.0]      # bid 1 x 3 with the hands 3 and 4* only
    t.play(2)
    t.play(4)                                         # 4 actions: a search root
    b = t.belief(0)
    assert b.off_path == [2] and b.restarted and b.probs == pytest.approx(expected)


def test_explain_names_an_off_path_bid_and_what_the_bot_assumes():
    # With the pretrained 1x4f net the bot never opens with 1 x 4 (40 of 40 sampled policies).
    r = run_cli_input(["play", "--net", "pretrained:1x4f", "--explain", "--seat", "0", "--seed", "1", "--hands", "1"],
                      "4\n1\n")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "rules: dice show faces 1..4; 4s are wild (shown as 4*)" in out
    assert "[1] bid 1 x 1" in out and "[8] bid 2 x 4" in out and "you: bid 1 x 4" in out
    assert ("(the bot's strategy never makes this move (bid 1 x 4) with any hand; its search restarted from every "
            "hand equally likely, so it assumes instead: 1: 0.25, 2: 0.25, 3: 0.25, 4*: 0.25)") in out
    assert "belief about your hand: )" not in out
    assert "(1 hand, too few for an interval)" in out


def test_play_from_a_pipe_asks_again_and_ends_at_eof():
    r = run_cli_input(["play", "--game", "kuhn", "--net", "oracle", "--iters", "64", "--seed", "3", "--seat", "1",
                       "--explain"], "nonsense\n1\n2\n2\n")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "not a legal action here: 'nonsense'" in out
    assert "hands: you" in out and "final score after" in out and "(end of input)" in out
    assert "the bot's probabilities" in out


@pytest.mark.parametrize("word", ["q", "quit", "exit", " QUIT "])
def test_q_quit_and_exit_end_the_session_with_the_score(word):
    # Kuhn, seat 0: check, then (the bot checks or bets) the next answer ends the hand or quits.
    r = run_cli_input(["play", "--game", "kuhn", "--net", "oracle", "--iters", "16", "--seed", "3", "--seat", "0"],
                      f"2\n1\n{word}\n1\n1\n")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "not a legal action" not in out and "(you quit)" in out and "(end of input)" not in out
    assert out.rstrip().splitlines()[-1].startswith("final score after 1 hand: ")
    assert out.count("--- hand") == 2                        # quit in the second hand: it is not scored


def test_kuhn_actions_read_check_bet_fold_call():
    r = run_cli_input(["play", "--game", "kuhn", "--net", "oracle", "--iters", "16", "--seed", "3", "--seat", "0",
                       "--hands", "1"], "check\nfold\n")
    assert r.returncode == 0, r.stderr
    assert "your move: [1] check  [2] bet" in r.stdout and "you: check" in r.stdout
    assert "pass" not in r.stdout


def test_quit_ends_a_board_game():
    r = run_cli_input(["play", "--game", "mnk", "--bot", "random", "--seed", "1", "--seat", "0"], "b2\nquit\n")
    assert r.returncode == 0, r.stderr
    assert "(you quit)" in r.stdout and "not a legal move" not in r.stdout and "final score after 0 games" in r.stdout


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


def test_a_public_belief_on_the_bots_own_card_only_is_no_off_path_action():
    t = _table(kuhn())
    t.new_hand()
    t.hands = (0, 2)             # the bot (player 1) holds K
    t.policy = np.full_like(t.policy, 0.5)
    t.policy[t._child(1)] = [0.0, 0.0, 1.0]   # player 0 bets with K only
    t.play(1)
    b = t.belief(0)
    assert b.off_path == [] and b.restarted and not b.probs.any() and b.public == pytest.approx([0, 0, 1])
