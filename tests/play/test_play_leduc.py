"""`rebel play` on Leduc hold'em (public chance): the table deals the board from P(b | both
hands), payoffs are the game's through the board (checked by hand against the rules), the
bot's beliefs are Bayes' rule through the deal with the chance factors and restart where
test-time search starts its subgames (the state after a deal, a deal at the depth limit
expanded; no mass: the hands the board leaves possible), the pot and stacks follow the betting
rules, actions read as poker players say them (check, bet, call, raise, fold, no-limit's pot
bet with its amount), --explain never depends on the bot's own card, and the command plays
both games from a pipe (with --stack and --ante)."""
from __future__ import annotations

import numpy as np
import pytest

from rebel import _core
from rebel.games.names import action_spellings, leduc_commitments, rules_note, state_note
from rebel.play.cards import Table, display_action, parse_action, search_roots
from tests.play.test_play import run_cli_input

JS, JH, QS, QH, KS, KH = range(6)
CALL, RAISE, ALL_IN = 1, 2, 3


def _game(name, **params):
    return _core.make_game(name, params)


def _board(game, card):
    """The chance outcome dealing ``card`` (action ids 3 + c in leduc, 4 + c in leduc_nolimit)."""
    return (3 if game.name == "leduc" else 4) + card


def _table(game, depth=10, off_path="skip", seed=0):
    t = Table(game, _core.ZeroNet(game), depth=depth, iterations=4, seed=seed, off_path=off_path)
    t.new_hand()
    return t


# ------------------------------------------------------------------ the board's deal
def test_the_board_is_drawn_given_both_hands():
    game = _game("leduc")
    t = _table(game, seed=11)
    t.hands = (KS, JH)
    t.history, t.node = [], 0
    t.play(CALL)
    t.play(CALL)                                   # check, check: the board's deal
    assert t.to_act == _core.CHANCE_PLAYER
    with pytest.raises(ValueError):
        t.bot_action_probs()                       # nobody acts at a chance node
    probs = t.public_chance_probs()
    assert probs == pytest.approx({_board(game, c): (0.0 if c in (KS, JH) else 0.25) for c in range(6)})
    counts = np.zeros(6)
    n = 4000
    for _ in range(n):
        t.history, t.node = [CALL, CALL], t.tree.find([CALL, CALL])
        counts[t.deal_public() - 3] += 1
        assert t.board == [t.history[-1]] and t.to_act == 0
    assert counts[KS] == 0 and counts[JH] == 0     # never a card either player holds
    sigma = np.sqrt(0.25 * 0.75 / n)
    for c in (JS, QS, QH, KH):
        assert abs(counts[c] / n - 0.25) < 4.5 * sigma


# ------------------------------------------------------------------ payoffs
def _play(game, hands, history):
    t = _table(game)
    t.hands = hands
    t.history, t.node = [], 0
    for a in history:
        t.play(a)
    assert t.finished
    return t


L, N = _game("leduc"), _game("leduc_nolimit")


@pytest.mark.parametrize("game, hands, history, payoff0", [
    # limit: Ks vs Jh, board Kh, check-check, check-check: Ks pairs the board and wins the ante
    (L, (KS, JH), [CALL, CALL, _board(L, KH), CALL, CALL], 1.0),
    (L, (JH, KS), [CALL, CALL, _board(L, KH), CALL, CALL], -1.0),
    (L, (JS, KH), [RAISE, 0], 1.0),                          # a fold at the first raise: the ante
    (L, (JS, KH), [CALL, RAISE, 0], -1.0),
    # Js vs Kh, board Jh: check, raise (3), call; raise (3 + 4 = 7), call: the pair of jacks beats the king
    (L, (JS, KH), [CALL, RAISE, CALL, _board(L, JH), RAISE, CALL], 7.0),
    (L, (QS, JH), [RAISE, CALL, _board(L, KS), CALL, CALL], 3.0),         # no pair: the queen beats the jack
    (L, (KS, KH), [CALL, CALL, _board(L, QS), CALL, CALL], 0.0),          # equal ranks split
    # raise, re-raise (5), call; raise (9), re-raise (13), fold: the folder loses 9
    (L, (QS, KS), [RAISE, RAISE, CALL, _board(L, JS), RAISE, RAISE, 0], -9.0),
    # no-limit: all-in, call; board Qs: Qh pairs it, all 1200
    (N, (QH, KS), [ALL_IN, CALL, _board(N, QS)], 1200.0),
    (N, (KS, QH), [CALL, RAISE, ALL_IN, CALL, _board(N, JS)], 1200.0),   # check, pot (300), all-in, call
    (N, (JS, KH), [RAISE, 0], 100.0),                                     # pot bet, fold: the ante
    (N, (JS, KH), [CALL, CALL, _board(N, QS), RAISE, RAISE, 0], -300.0),  # pot (300), pot (900), fold
    (N, (KH, QS), [CALL, RAISE, CALL, _board(N, JH), CALL, CALL], 300.0),  # no pair: K beats Q, 300
])
def test_payoffs_through_the_board_are_the_rules(game, hands, history, payoff0):
    t = _play(game, hands, history)
    assert t.payoff(0) == payoff0 and t.payoff(1) == -payoff0
    assert all(game.player_to_act(history[:i]) == _core.CHANCE_PLAYER for i, a in enumerate(history)
               if a >= _board(game, 0))


# ------------------------------------------------------------------ pot and stacks
@pytest.mark.parametrize("history, spent", [
    ([], (1, 1)),
    ([RAISE], (3, 1)),
    ([RAISE, RAISE], (3, 5)),
    ([RAISE, RAISE, CALL], (5, 5)),
    ([RAISE, RAISE, CALL, _board(L, KS)], (5, 5)),
    ([RAISE, RAISE, CALL, _board(L, KS), RAISE], (9, 5)),
    ([RAISE, RAISE, CALL, _board(L, KS), RAISE, RAISE], (9, 13)),
    ([CALL, RAISE, 0], (1, 3)),
])
def test_limit_commitments(history, spent):
    assert leduc_commitments(L, history) == spent


@pytest.mark.parametrize("history, spent", [
    ([], (100, 100)),
    ([RAISE], (300, 100)),
    ([RAISE, RAISE], (300, 900)),
    ([RAISE, RAISE, ALL_IN], (1200, 900)),
    ([RAISE, RAISE, ALL_IN, CALL], (1200, 1200)),
    ([CALL, RAISE, CALL, _board(N, KS), RAISE], (900, 300)),
    ([CALL, CALL, _board(N, KS), ALL_IN], (1200, 100)),
])
def test_nolimit_commitments(history, spent):
    assert leduc_commitments(N, history) == spent


def test_other_stacks_and_antes():
    game = _game("leduc_nolimit", stack=500, ante=50)
    assert leduc_commitments(game, [RAISE, RAISE]) == (150, 450)
    assert game.legal_actions([RAISE, RAISE]) == [0, CALL, ALL_IN]  # a pot raise (1350) is past the stack
    assert leduc_commitments(game, [RAISE, RAISE, ALL_IN]) == (500, 450)
    assert "ante 50, stacks 500" in rules_note(game)


def test_state_notes_show_the_pot_and_stacks():
    seats = {1: "you", 0: "bot"}
    assert state_note(N, [CALL, RAISE, CALL, _board(N, KS), RAISE], seats) == \
        "pot 1200 (you 300, bot 900); stacks: you 900, bot 300"
    assert state_note(N, []) == "pot 200 (player 0 100, player 1 100); stacks: player 0 1100, player 1 1100"
    assert state_note(L, [RAISE, RAISE], {0: "you", 1: "bot"}) == "pot 8 (you 3, bot 5)"
    assert state_note(_core.make_game("kuhn"), [1]) == ""


def test_check_and_bet_are_spellings_where_nothing_is_owed():
    assert parse_action(L, [CALL, RAISE], "check", []) == CALL
    assert parse_action(L, [CALL, RAISE], "bet", []) == RAISE
    assert parse_action(L, [0, CALL, RAISE], "check", [RAISE]) is None      # facing a raise: call it
    assert parse_action(L, [0, CALL, RAISE], "call", [RAISE]) == CALL
    assert parse_action(N, [CALL, RAISE, ALL_IN], "all in", []) == ALL_IN
    assert parse_action(N, [CALL, RAISE, ALL_IN], "pot", []) == RAISE
    assert action_spellings(N, RAISE) == ["bet pot", "pot", "raise pot", "raise"]


@pytest.mark.parametrize("game, history, labels", [
    (L, [], ["check", "bet"]),
    (L, [CALL], ["check", "bet"]),
    (L, [RAISE], ["fold", "call", "raise"]),
    (L, [RAISE, RAISE], ["fold", "call"]),                        # two raises: the round's cap
    (L, [CALL, CALL, _board(L, KS)], ["check", "bet"]),           # a new round: nothing owed
    (L, [CALL, CALL, _board(L, KS), RAISE], ["fold", "call", "raise"]),
    (N, [], ["check", "bet pot (to 300)", "all-in"]),
    (N, [RAISE], ["fold", "call", "raise pot (to 900)", "all-in"]),
    (N, [CALL, RAISE], ["fold", "call", "raise pot (to 900)", "all-in"]),
    (N, [RAISE, RAISE], ["fold", "call", "all-in"]),              # a pot raise to 2700 is past the stack
    (N, [RAISE, CALL, _board(N, JS)], ["check", "bet pot (to 900)", "all-in"]),
    (_game("leduc_nolimit", stack=500, ante=50), [RAISE], ["fold", "call", "raise pot (to 450)", "all-in"]),
    (_game("leduc_nolimit", fold_without_bet=1), [], ["fold", "check", "bet pot (to 300)", "all-in"]),
])
def test_poker_actions_read_as_players_say_them(game, history, labels):
    legal = [int(a) for a in game.legal_actions(history)]
    assert [display_action(game, a, history) for a in legal] == labels
    for a, label in zip(legal, labels):
        assert parse_action(game, legal, label, history) == a                  # the shown name is accepted
        assert parse_action(game, legal, game.action_name(a), history) == a    # and the game's own name
    assert [display_action(game, a) for a in legal] == [game.action_name(a) for a in legal]  # no state: the core's


def test_every_old_spelling_still_parses():
    assert parse_action(L, [CALL, RAISE], "raise", []) == RAISE               # limit's core names, nothing owed
    assert parse_action(L, [CALL, RAISE], "call", []) == CALL
    assert parse_action(L, [0, CALL, RAISE], "bet", [RAISE]) is None          # facing a raise: no bet
    assert parse_action(N, [0, CALL, RAISE, ALL_IN], "raise pot", [RAISE]) == RAISE
    assert parse_action(N, [0, CALL, RAISE, ALL_IN], "bet pot", [RAISE]) == RAISE
    assert parse_action(N, [0, CALL, RAISE, ALL_IN], "raise", [RAISE]) == RAISE
    assert parse_action(N, [0, CALL, RAISE, ALL_IN], "Raise pot (to 900)", [RAISE]) == RAISE
    assert parse_action(N, [CALL, RAISE, ALL_IN], "bet", []) == RAISE
    assert parse_action(N, [CALL, RAISE, ALL_IN], "allin", []) == ALL_IN
    assert parse_action(N, [CALL, RAISE, ALL_IN], "2", []) == RAISE


def test_kuhn_reads_check_bet_fold_call():
    kuhn = _core.make_game("kuhn")
    assert [display_action(kuhn, a, []) for a in (0, 1)] == ["check", "bet"]
    assert [display_action(kuhn, a, [0]) for a in (0, 1)] == ["check", "bet"]
    assert [display_action(kuhn, a, [1]) for a in (0, 1)] == ["fold", "call"]
    assert [display_action(kuhn, a, [0, 1]) for a in (0, 1)] == ["fold", "call"]
    assert parse_action(kuhn, [0, 1], "pass", [1]) == 0 and parse_action(kuhn, [0, 1], "bet", [1]) == 1
    assert parse_action(kuhn, [0, 1], "check", [1]) is None                   # facing the bet: fold or call
    assert parse_action(kuhn, [0, 1], "call", []) is None


# ------------------------------------------------------------------ explain keeps the bot's hand private
def _explain_lines(game, human, hands, policy, history):
    """What --explain prints at the end of ``history`` (the bot's strategy if it acts there, the
    belief about the human's hand if the human does) with these dealt ``hands``."""
    import io

    from rebel.cli.play import _Session

    t = _table(game)
    t.policy = policy
    t.hands = hands
    t.history, t.node = [], 0
    for a in history:
        t.play(a)
    out = io.StringIO()
    session = _Session(t, str(human), True, io.StringIO(), out)
    if t.to_act == human:
        session.explain_belief(human)
    else:
        session.explain_strategy()
    return out.getvalue().splitlines()


KUHN = _core.make_game("kuhn")


@pytest.mark.parametrize("game, human, human_hand, history", [
    (KUHN, 0, 0, [0, 1]),                                       # you checked, the bot bet: your belief
    (KUHN, 1, 1, [1]),                                          # the bot bet: your belief
    (KUHN, 1, 2, []),                                           # the bot's first move: its strategy
    (L, 0, QH, [CALL, RAISE, CALL, _board(L, KH), RAISE]),      # the bot's decision after the board
    (L, 0, QH, [CALL, RAISE, CALL, _board(L, KH)]),             # yours, after the board
    (L, 1, JS, [RAISE, RAISE]),                                 # yours, facing the re-raise
    (N, 1, KS, [CALL, RAISE, CALL, _board(N, JS), RAISE]),      # yours
    (N, 0, QS, [CALL, RAISE, RAISE]),                           # yours
    (N, 0, QS, [CALL, RAISE, CALL, _board(N, QH), CALL]),       # the bot's
])
def test_explain_never_depends_on_the_bots_hand(game, human, human_hand, history):
    """Every line --explain prints is the same whatever hand the bot holds, and a belief about
    your hand lists every hand the public actions allow, the bot's own card included."""
    t = _table(game)
    _random_policy(t, seed=len(history))
    policy = 0.3 + 0.7 * t.policy                                  # every hand on every path, well above 0.005
    board = [a - _board(game, 0) for i, a in enumerate(history)
             if game.player_to_act(history[:i]) == _core.CHANCE_PLAYER]
    bots = [h for h in range(game.num_hands) if h != human_hand and h not in board]
    shown = {}
    for bot in bots:
        hands = (human_hand, bot) if human == 0 else (bot, human_hand)
        shown[bot] = _explain_lines(game, human, hands, policy, history)
    first = shown[bots[0]]
    assert first and all(lines == first for lines in shown.values()), shown
    names = [game.hand_name(h) for h in range(game.num_hands)]
    if game.player_to_act(history) == human:
        (line,) = first
        assert line.startswith("  (the bot's belief about your hand: ")
        listed = [part.split(":")[0] for part in line[len("  (the bot's belief about your hand: "):-1].split(", ")]
        assert listed == [n for h, n in enumerate(names) if h not in board]   # the bot's card among them
    else:
        assert first[0].startswith("  (the bot's probabilities over the hands it may hold: ")
        assert all(n in first[1] for h, n in enumerate(names) if h not in board)  # its strategy by hand


# ------------------------------------------------------------------ restart points
@pytest.mark.parametrize("name", ["leduc", "leduc_nolimit", "kuhn"])
@pytest.mark.parametrize("depth", [1, 2, 3, 10])
def test_search_roots_are_test_time_searchs(name, depth):
    game = _core.make_game(name)
    search = _core.TestTimeSearch(game, _core.ZeroNet(game), "lcfr", depth, 4)
    tree = search.full_tree
    roots = {n for n in range(len(tree)) if not game.is_terminal(tree.history(n))
             and search_roots(game, tree.history(n), depth)[-1] == len(tree.history(n))}
    assert len(roots) == search.num_search_roots
    # The subgame at each root ends where the next searches start: its pseudo-leaves are roots,
    # and every root but the first is some subgame's pseudo-leaf.
    leaves = set()
    for n in roots:
        sub = _core.build_tree(game, tree.history(n), depth, chance_leaves=True)
        leaves |= {tree.find(sub.history(int(leaf))) for leaf in sub.pseudo_leaves}
    assert leaves == roots - {0}


def test_search_roots_along_histories():
    kh = _board(L, KH)
    assert search_roots(L, [CALL, CALL, kh, CALL], 10) == [0, 3]
    assert search_roots(L, [CALL, CALL, kh, CALL], 2) == [0, 3]   # a deal at depth 2 is expanded: its child is a root
    assert search_roots(L, [CALL, RAISE, CALL, kh, CALL, RAISE], 2) == [0, 2, 4, 6]
    assert search_roots(L, [CALL, RAISE, RAISE, CALL, kh], 3) == [0, 3, 5]
    assert search_roots(_core.make_game("kuhn"), [0, 1, 1], 2) == [0, 2]


# ------------------------------------------------------------------ beliefs
def _random_policy(t, seed):
    rng = np.random.default_rng(seed)
    t.policy = rng.uniform(0.05, 1.0, size=np.asarray(t.policy).shape)


def _bayes(t, player):
    """prior x player's policy at its decisions x the board's chance factors, normalised:
    Bayes' rule along t.history, from the game and the policy alone."""
    game, history = t.game, t.history
    coef = np.asarray(game.hand_prior, dtype=np.float64).copy()
    for i, a in enumerate(history):
        who = game.player_to_act(history[:i])
        if who == _core.CHANCE_PLAYER:
            coef *= game.chance_factors(history[:i], a)
        elif who == player:
            coef *= t.policy[t.tree.find(history[:i + 1])]
    return coef / coef.sum()


@pytest.mark.parametrize("depth", [10, 2])
@pytest.mark.parametrize("name, history", [
    ("leduc", [RAISE, CALL, 3 + KH, CALL, RAISE]),
    ("leduc", [CALL, RAISE, RAISE, CALL, 3 + QS, RAISE, RAISE]),
    ("leduc_nolimit", [CALL, RAISE, CALL, 4 + JS, RAISE, ALL_IN]),
])
def test_beliefs_are_bayes_rule_through_the_deal(depth, name, history):
    game = _core.make_game(name)
    t = _table(game, depth=depth)
    _random_policy(t, seed=len(history) + depth)
    t.hands = (KS, JH)
    t.history, t.node = [], 0
    for a in history:
        t.play(a)
    for player in (0, 1):
        b = t.belief(player)
        expected = _bayes(t, player)
        assert b.public == pytest.approx(expected, rel=1e-12) and b.off_path == [] and b.restarted
        board = t.board[0] - (3 if name == "leduc" else 4)
        assert b.public[board] == 0.0
        other = t.hands[1 - player]
        probs = expected * np.array([game.hand_pair_weight(h, other) for h in range(6)])
        assert b.probs == pytest.approx(probs / probs.sum(), rel=1e-12)


@pytest.mark.parametrize("depth", [10, 2])
def test_no_mass_after_the_deal_falls_back_to_the_hands_the_board_leaves(depth):
    t = _table(L, depth=depth)
    t.policy = np.full_like(t.policy, 0.5)
    t.policy[t._child(CALL)] = [0, 0, 0, 0, 0, 1.0]   # player 0 checks with Kh only
    t.hands = (KH, JS)
    t.play(CALL)
    t.play(CALL)
    assert t.belief(0).public == pytest.approx([0, 0, 0, 0, 0, 1])
    t.play(3 + KH)                                   # the board is Kh: no hand of the policy is left
    b = t.belief(0)
    assert b.off_path == [] and b.restarted
    assert b.public == pytest.approx([0.2, 0.2, 0.2, 0.2, 0.2, 0.0])   # not the board card
    assert b.probs == pytest.approx([0, 0.25, 0.25, 0.25, 0.25, 0])    # nor the bot's Js


@pytest.mark.parametrize("off_path, expected", [
    ("skip", [0.2, 0.2, 0.2, 0.2, 0.2, 0.0]),            # no hand left: the hands the board leaves
    ("conditional", [1 / 4, 1 / 4, 0.5 / 4, 0.5 / 4, 1 / 4, 0.0]),  # one tremble each: their weights x f_b
])
def test_off_path_modes_restart_at_the_deal(off_path, expected):
    t = _table(L, depth=10, off_path=off_path)
    t.policy = np.full_like(t.policy, 0.5)
    t.policy[t._child(CALL)] = [1.0, 1.0, 0.5, 0.5, 1.0, 1.0]
    t.hands = (QH, JS)
    t.play(CALL)
    t.play(RAISE)
    t.policy[t._child(CALL)] = 0.0                   # player 0 calls the raise: no hand of the policy does
    t.play(CALL)
    b = t.belief(0)
    assert b.off_path == [2] and not b.restarted      # no belief until the search at the board
    t.play(3 + KH)
    b = t.belief(0)
    assert b.off_path == [2] and b.restarted and b.public == pytest.approx(expected)


# ------------------------------------------------------------------ the command
def test_play_leduc_from_a_pipe():
    r = run_cli_input(["play", "--game", "leduc", "--net", "oracle", "--hands", "2", "--seed", "3", "--iters", "64",
                       "--seat", "0", "--explain"], "nonsense\n" + "call\n" * 12)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "bot = depth-10 search" in out and "rules: ante 1;" in out
    assert "not a legal action here: 'nonsense'" in out
    assert out.count("--- hand") == 2 and out.count("board: ") == 2   # we never fold nor raise: two boards
    assert "pot 2 (you 1, bot 1)" in out
    assert out.count("; board ") == 2 and "hands: you " in out
    assert "final score after 2 hands" in out


def test_play_leduc_shows_check_and_bet_and_no_thinking_line_on_a_pipe():
    r = run_cli_input(["play", "--game", "leduc", "--net", "oracle", "--hands", "1", "--seed", "3", "--iters", "16",
                       "--seat", "0"], "check\ncall\nq\n")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "your move: [1] check  [2] bet\n" in out and "you: check" in out
    assert "thinking" not in out and "\x1b" not in out and "thinking" not in r.stderr


def test_play_leduc_nolimit_with_stack_and_ante():
    r = run_cli_input(["play", "--game", "leduc_nolimit", "--stack", "900", "--ante", "50", "--net", "oracle",
                       "--hands", "1", "--seed", "3", "--iters", "16", "--seat", "0"], "bet pot\nq\n")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "leduc_nolimit(stack=900, ante=50)" in out and "rules: ante 50, stacks 900;" in out
    assert "pot 100 (you 50, bot 50); stacks: you 850, bot 850" in out
    assert "[2] bet pot (to 150)" in out and "you: bet pot (to 150)" in out
    assert "(you quit)" in out and "final score after 0 hands" in out


def test_play_leduc_nolimit_from_a_pipe():
    r = run_cli_input(["play", "--game", "leduc_nolimit", "--net", "oracle", "--hands", "2", "--seed", "3",
                       "--iters", "16", "--seat", "1"], "call\n" * 12)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "pot " in out and "; stacks: you " in out and out.count("board: ") == 2
    assert "final score after 2 hands" in out


def test_play_leduc_bad_input_exits_2():
    from tests.conftest import run_cli

    r = run_cli("play", "--game", "leduc", "--faces", "3")
    assert r.returncode == 2 and "--faces does not apply to leduc" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("play", "--game", "leduc", "--depth", "0")
    assert r.returncode == 2 and "--depth must be >= 1" in r.stderr
    r = run_cli("play", "--game", "leduc", "--stack", "900")                   # as `rebel solve` refuses them
    assert r.returncode == 2 and "--stack does not apply to leduc" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("play", "--game", "leduc_nolimit", "--stack", "50")
    assert r.returncode == 2 and "stack must exceed the ante" in r.stderr
    r = run_cli("play", "--game", "kuhn", "--ante", "5")
    assert r.returncode == 2 and "--ante does not apply to kuhn" in r.stderr
