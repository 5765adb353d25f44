"""Playing a hold'em endgame spot against its solution (rebel/play/holdem_table.py and `rebel
play --game holdem_endgame`): deals follow the two ranges with card removal, dealt cards avoid
both hands, payoffs are the solver's chips, actions read as players write them, a seeded
transcript from a pipe is deterministic, and bad input exits 2 with one line."""
from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO_ROOT, run_cli
from helpers.holdem_spots import CLAIRVOYANCE, NARROW_TURN, write_spot

from rebel.games.holdem_endgame import build_endgame
from rebel.games.holdem_spot import load_spot
from rebel.play.holdem_table import HoldemTable
from rebel.search.holdem_solve import solve_spot


def table(spot_map: dict, iterations: int = 300, seed: int = 0) -> HoldemTable:
    spot = load_spot(spot_map)
    game = build_endgame(spot)
    engine, _ = solve_spot(spot, "dcfr", iterations, target=0.5, game=game)
    return HoldemTable(game, engine, spot.stack, seed=seed)


def test_deals_follow_both_ranges_with_card_removal() -> None:
    spot = {"board": "Td9d6hQc2s", "pot": 100, "stack": 100, "ranges": {"oop": "AA,AKs:0.5", "ip": "AA,KK,AKo"}}
    t = table(spot, iterations=1)
    h0, h1 = t.game.hands(0), t.game.hands(1)
    w0, w1 = t.game.weights(0), t.game.weights(1)
    exact = np.zeros((len(h0), len(h1)))
    for (i, a), (j, b) in itertools.product(enumerate(h0.tolist()), enumerate(h1.tolist())):
        if not set(a) & set(b):
            exact[i, j] = w0[i] * w1[j]
    exact /= exact.sum()
    counts = np.zeros_like(exact)
    for _ in range(20000):
        i, j = t.deal()
        counts[i, j] += 1
    assert counts[exact == 0].sum() == 0  # never a shared card
    np.testing.assert_allclose(counts.sum(axis=1) / 20000, exact.sum(axis=1), atol=0.01)
    np.testing.assert_allclose(counts.sum(axis=0) / 20000, exact.sum(axis=0), atol=0.01)


@pytest.mark.parametrize("line, hands, payoff0", [
    (["bet 100", "call"], (1, 0), 150.0),     # KK called
    (["bet 100", "call"], (0, 0), -150.0),    # 53 called
    (["bet 100", "fold"], (0, 0), 50.0),      # the bluff works
    (["check", "check"], (1, 0), 50.0),
    (["check", "bet 100", "fold"], (1, 0), -50.0),  # OOP folds
])
def test_payoffs_are_the_solvers_chips(line, hands, payoff0) -> None:
    t = table(CLAIRVOYANCE, iterations=10)
    t.new_hand()
    t.hands = hands  # hands of OOP: 5d3h (0), KdKc (1); of IP: AhAc (0)
    assert t.hand_name(0) == ("5d3h", "KdKc")[hands[0]] and t.hand_name(1) == "AhAc"
    for step in line:
        index = t.parse_action(step)
        assert index is not None
        t.play(index)
    assert t.finished
    assert t.payoff(0) == payoff0 and t.payoff(1) == -payoff0


def test_actions_read_as_players_write_them() -> None:
    t = table(NARROW_TURN, iterations=10)
    t.new_hand()
    assert t.actions() == ["check", "bet 120"] and t.to_act == 0
    assert [t.parse_action(x) for x in ("1", "2", "3", "check", "Bet 120", "bet120", "bet", "raise", "x")] == \
        [0, 1, None, 0, 1, 1, 1, None, None]
    t.play(1)
    assert t.pot == 320 and t.to_call(1) == 120 and t.behind(0) == 780 and t.behind(1) == 900
    t.play(t.parse_action("call"))
    assert t.dealing and t.to_act is None
    chance = t.node
    for _ in range(200):
        t.node = chance
        card = t.deal_card()
        held = {t.names[0][t.hands[0]][i:i + 2] for i in (0, 2)} | {t.names[1][t.hands[1]][i:i + 2] for i in (0, 2)}
        assert card not in held and t.board[-1] == card
    assert t.parse_action("all in") == t.actions().index("all-in")
    assert set(t.strategy(0)) == set(t.actions()) and sum(t.strategy(0).values()) == pytest.approx(1.0)
    assert sum(t.range_strategy().values()) == pytest.approx(1.0)


def play(args: list[str], text: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.run([sys.executable, "-m", "rebel", "play", *args], input=text, capture_output=True, text=True,
                          timeout=120, env=env, cwd=REPO_ROOT)


def test_a_seeded_transcript_is_deterministic(tmp_path) -> None:
    spot = write_spot(tmp_path, CLAIRVOYANCE)
    args = ["--game", "holdem_endgame", "--spot", str(spot), "--seed", "3", "--seat", "oop", "--hands", "3",
            "--explain"]
    moves = "bet 100\n2\nnonsense\ncheck\n"
    first, second = play(args, moves), play(args, moves)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    out = first.stdout
    assert "solving: dcfr to 0.5 chips (0.5% of the pot), at most 1000 iterations" in out
    assert "--- hand 1: you are OOP (first to act); your hand: 5d3h; board Ks Qd 7h 4c 2s" in out
    assert "pot 100; you 1000 behind, bot 1000 behind" in out
    assert "your move: [1] check  [2] bet 100" in out and "you: bet 100" in out
    assert "(the solver with your hand: check 0.50, bet 100 0.50)" in out
    assert re.search(r"\(the bot's range here: fold 0\.(4[5-9]|5[0-5]), call 0\.(4[5-9]|5[0-5])\)", out)
    assert "not an action here: 'nonsense'; give its number or its name" in out
    assert out.count("--- hand") == 3 and "final score after 3 hands: you " in out
    assert "(3 hands, too few for an interval)" in out
    payoffs = [line.rsplit(" ", 2)[-2:] for line in out.splitlines() if line.startswith(("showdown:", "the bot folds"))]
    assert len(payoffs) == 3


def test_seat_ip_and_eof_end_the_session(tmp_path) -> None:
    spot = write_spot(tmp_path, NARROW_TURN)
    r = play(["--spot", str(spot), "--seed", "5", "--seat", "ip", "--iters", "100"], "call\n")
    assert r.returncode == 0, r.stderr
    assert "--- hand 1: you are IP (second to act)" in r.stdout
    assert "(end of input)" in r.stdout and "final score after" in r.stdout


@pytest.mark.parametrize("args, message", [
    (["--game", "holdem_endgame"], "--game holdem_endgame needs --spot FILE"),
    (["--spot", "SPOT", "--net", "oracle"], "--net does not apply to holdem_endgame"),
    (["--spot", "SPOT", "--target", "x"], "target 'x' is not a number"),
    (["--spot", "/no/such.yaml"], "spot file '/no/such.yaml' not found"),
    (["--game", "kuhn", "--spot", "SPOT"], "--spot applies to --game holdem_endgame only"),
    (["--game", "kuhn", "--seat", "oop"], "--seat oop applies to --game holdem_endgame"),
])
def test_bad_input_exits_2(tmp_path, args, message) -> None:
    spot = str(write_spot(tmp_path, CLAIRVOYANCE))
    r = run_cli("play", *[spot if a == "SPOT" else a for a in args])
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
