"""Leduc hold'em through the core's public-chance passes: the exact game value, best
responses against a brute force written from explicit deal probabilities, every full-game
solver and chance-sampling MCCFR."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from helpers import reference_chance

from rebel import _core
from rebel.games import make
from rebel.games.units import deepstack_leduc_chips
from rebel.search.solve import solve

#: Player 0's value of limit Leduc: the sequence-form LP value OpenSpiel's tests check.
LEDUC_VALUE = -0.085606424078
BOARD_OFFSET = {"leduc": 3, "leduc_nolimit": 4}  # rebel's event id of board card c: offset + c


def leduc(name: str = "leduc") -> _core.Game:
    return make(name)


@functools.lru_cache(maxsize=None)
def tree_of(name: str) -> _core.PublicTree:
    return _core.build_tree(leduc(name))


def board_probability(name: str):
    """P(board card | both private cards), from the rules: one of the four cards left."""
    def prob(history, outcome, h0, h1):
        card = outcome - BOARD_OFFSET[name]
        return 0.0 if card in (h0, h1) else 0.25
    return prob


def random_policy(tree: _core.PublicTree, hands: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    policy = np.zeros((len(tree), hands))
    for n in tree.decision_nodes.tolist():
        first, count = int(tree.first_child[n]), int(tree.num_children[n])
        policy[first:first + count] = rng.dirichlet(np.ones(count), size=hands).T
    return policy


def test_tree_has_one_chance_node_per_first_round_call():
    tree = tree_of("leduc")
    chance = tree.chance_nodes.tolist()
    assert chance and all(int(tree.player[n]) == _core.CHANCE_PLAYER for n in chance)
    assert all(int(tree.kind[n]) == int(_core.NodeKind.CHANCE) for n in chance)
    for n in chance:
        factors = tree.chance_factors(n)
        assert factors.shape == (6, 6)  # six board cards, six hands
        # f_b(h) f_b(h') = P(b | h, h') = 1/4 for three distinct cards, 0 when b is held
        np.testing.assert_allclose(factors, 0.5 * (1 - np.eye(6)))


@pytest.mark.parametrize("name", ["leduc", "leduc_nolimit"])
@pytest.mark.parametrize("seed", [0, 1])
def test_best_response_and_value_match_brute_force(name, seed):
    game, tree = leduc(name), tree_of(name)
    policy = random_policy(tree, game.num_hands, seed)
    report = _core.exploitability(game, tree, policy)
    prob = board_probability(name)
    for player in (0, 1):
        brute = reference_chance.value(game, tree, policy, prob, player, best_respond=True)
        assert report["br_values"][player] == pytest.approx(brute, abs=1e-10)
    value0 = reference_chance.value(game, tree, policy, prob, 0, best_respond=False)
    value1 = reference_chance.value(game, tree, policy, prob, 1, best_respond=False)
    assert report["game_value"] == pytest.approx(value0, abs=1e-10)
    assert value0 + value1 == pytest.approx(0.0, abs=1e-10)  # zero-sum


def test_uniform_profile_is_exploitable_and_zero_sum():
    game, tree = leduc(), tree_of("leduc")
    report = _core.exploitability(game, tree, _core.uniform_policy(game, tree))
    assert report["exploitability"] > 1.0  # OpenSpiel: uniform random limit Leduc ~ 2.37 (NashConv 4.75)


def test_long_solve_reaches_the_lp_game_value():
    r = solve(leduc(), "dcfr", 20000, progress=False, tree=tree_of("leduc"))
    assert r.exploitability < 1e-5
    assert abs(r.game_value - LEDUC_VALUE) < 1e-6
    assert r.br_values[0] >= LEDUC_VALUE - 1e-12 >= -r.br_values[1] - 1e-12  # the BRs bracket the value


@pytest.mark.parametrize("solver", ["cfr", "lcfr", "cfr+", "dcfr", "fp", "lfp"])
def test_every_solver_converges_on_limit_leduc(solver):
    tree = tree_of("leduc")
    short = solve(leduc(), solver, 64, progress=False, tree=tree)
    long = solve(leduc(), solver, 1024, progress=False, tree=tree)
    assert long.exploitability < short.exploitability
    bound = {"cfr": 0.05, "lcfr": 0.02, "cfr+": 0.02, "dcfr": 0.02, "fp": 0.3, "lfp": 0.2}[solver]
    assert long.exploitability < bound
    assert long.br_values[0] >= LEDUC_VALUE - 1e-12 >= -long.br_values[1] - 1e-12


@pytest.mark.parametrize("off_path", ["floor", "conditional"])
def test_off_path_modes_converge_on_limit_leduc(off_path):
    r = solve(leduc(), "lcfr", 1024, off_path=off_path, progress=False, tree=tree_of("leduc"))
    assert r.exploitability < 0.02


def test_chance_sampling_mccfr_samples_the_board():
    game, tree = leduc(), tree_of("leduc")
    mccfr = _core.MccfrSolver(game, tree, seed=7)
    mccfr.run(20000)
    early = _core.exploitability(game, tree, mccfr.average_policy())["exploitability"]
    mccfr.run(180000)
    late = _core.exploitability(game, tree, mccfr.average_policy())["exploitability"]
    assert late < early and late < 0.1


def test_deepstack_leduc_uniform_random_figure_and_its_units():
    """DeepStack-Leduc's tutorial: the uniform-random strategy is exploitable by "a bit over 175
    chips" on its tree (fold offered at every decision). Its TreeValues weighs each pair of
    distinct private cards 1/36 (ranges of 1/6, not renormalised for removal): a brute force
    with those weights gives 175.52, which is our exploitability times 5/6."""
    game = make("leduc_nolimit", fold_without_bet=1)
    tree = _core.build_tree(game)
    uniform = _core.uniform_policy(game, tree)
    ours = _core.exploitability(game, tree, uniform)["exploitability"]
    assert ours == pytest.approx(210.625, abs=1e-9)

    def deepstack_deal(h0, h1):
        return 0.0 if h0 == h1 else 1 / 36

    brs = [reference_chance.value(game, tree, uniform, board_probability("leduc_nolimit"), p, best_respond=True,
                                  deal_prob=deepstack_deal) for p in (0, 1)]
    assert sum(brs) / 2 == pytest.approx(deepstack_leduc_chips(ours), abs=1e-9)
    assert 175.0 < deepstack_leduc_chips(ours) < 176.0
    # Folding with nothing to call is dominated: the same equilibrium value either way.
    default = solve(leduc("leduc_nolimit"), "dcfr", 4000, progress=False, tree=tree_of("leduc_nolimit"))
    folds = solve(game, "dcfr", 4000, progress=False, tree=tree)
    assert abs(default.game_value - folds.game_value) < default.exploitability + folds.exploitability


def test_subgame_exploitability_from_the_start_is_the_full_games():
    game, tree = leduc(), tree_of("leduc")
    policy = random_policy(tree, game.num_hands, 3)
    prior = np.asarray(game.hand_prior)
    full = _core.exploitability(game, tree, policy)
    sub = _core.subgame_exploitability(game, tree, policy, prior, prior)
    assert sub["exploitability"] == pytest.approx(full["exploitability"], abs=1e-12)
    assert sub["br_values"] == pytest.approx(full["br_values"], abs=1e-12)
    assert sub["game_value"] == pytest.approx(full["game_value"], abs=1e-12)
    with pytest.raises(ValueError, match="joint mass 0"):
        _core.subgame_exploitability(game, tree, policy, np.eye(6)[0], np.eye(6)[0])


def test_a_round_two_subgame_after_the_deal_is_solved_by_cfr():
    """The second round after check-check and the board Ks: the reaches are the prior times the
    board's chance factors; CFR on that subgame drives its exploitability towards 0, and the
    value per hand is conditional on reaching it (divided by P(board) = 1/6)."""
    game = leduc()
    root = [1, 1, 3 + 4]
    tree = _core.build_tree(game, root)
    reach = np.asarray(game.hand_prior) * np.asarray(game.chance_factors([1, 1], 3 + 4))
    uniform = _core.subgame_exploitability(game, tree, _core.uniform_policy(game, tree), reach, reach)
    solver = _core.SubgameSolver(game, tree, reach / reach.sum(), reach / reach.sum(), solver="lcfr")
    solver.run(2000)
    solved = _core.subgame_exploitability(game, tree, solver.average_policy(), reach, reach)
    assert uniform["exploitability"] > 1.0 and solved["exploitability"] < 1e-3
    br0, br1 = solved["br_values"]
    assert br0 >= solved["game_value"] >= -br1  # the profile's value lies between the best responses


def test_search_starts_each_betting_round_after_the_deal():
    """Test-time search on limit Leduc: a subgame ends with its betting round, its leaves the
    dealt cards (where the next searches start, 30 of them: 5 ways to end round one x 6
    boards), each leaf's beliefs carrying the card's chance factors. With exact leaf values
    (the oracle) the searched policy improves with the iterations."""
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings

    def run(iterations: int) -> dict:
        settings = EvalSettings(net="oracle", depth=10, iterations=iterations, oracle_iterations=iterations,
                                repeats=4, full_game=False)
        return evaluate(leduc(), settings, progress=False)

    short, longer = run(16), run(64)
    assert short["search_roots"] == 1 + 30
    uniform = _core.exploitability(leduc(), tree_of("leduc"), _core.uniform_policy(leduc(), tree_of("leduc")))
    assert longer["mode_a"]["exploitability"] < short["mode_a"]["exploitability"] < uniform["exploitability"]
    assert longer["mode_a"]["exploitability"] < 0.2  # measured 0.133
    assert run(16)["mode_b"] == short["mode_b"]  # mode (b) is deterministic for a seed


@pytest.mark.parametrize("depth, roots", [(1, 186), (2, 93), (3, 62)])
def test_short_subgames_still_end_after_the_deal(depth, roots):
    """Subgames shorter than a round: a deal at the depth limit is expanded, not cut, so no
    leaf lies before a deal and every leaf is a search root (a pre-deal leaf would have
    been a state no search starts at)."""
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings

    game = leduc()
    for history in ([], [2], [1, 2]):
        tree = _core.build_tree(game, history, depth, True)
        for leaf in tree.pseudo_leaves:
            parent = tree.parent[leaf]
            assert tree.kind[parent] == int(_core.NodeKind.CHANCE) or tree.depth[leaf] == depth
            assert game.player_to_act(tree.history(leaf)) != 2
    settings = EvalSettings(net="oracle", depth=depth, iterations=32, oracle_iterations=32, repeats=2, full_game=False)
    result = evaluate(game, settings, progress=False)
    assert result["search_roots"] == roots
    assert 0.0 < result["mode_a"]["exploitability"] < 0.5  # measured 0.32, 0.23, 0.16 at T = 64


def test_beliefs_on_a_hand_the_board_holds_are_refused():
    game = leduc()
    tree = _core.build_tree(game, [1, 1, 3 + 4])  # board Ks
    beliefs = np.full(6, 1 / 6)
    with pytest.raises(ValueError, match="beliefs0 put mass 0.166667 on hand Ks, which the public cards dealt make"):
        _core.SubgameSolver(game, tree, beliefs, beliefs, solver="lcfr")
    fine = np.where(np.arange(6) == 4, 0.0, 0.2)
    _core.SubgameSolver(game, tree, fine, fine, solver="lcfr").run(2)


def test_build_tree_chance_leaves_names():
    """build_tree's chance_leaves: True is 'after_deal' (the dealt cards are leaves), False is
    'none', 'at_deal' cuts at the deal itself; anything else is refused by name."""
    game = leduc()
    after = _core.build_tree(game, [], 10, "after_deal")
    assert after.pseudo_leaves.tolist() == _core.build_tree(game, [], 10, True).pseudo_leaves.tolist()
    assert len(_core.build_tree(game, [], 10, "none")) == len(_core.build_tree(game, [], 10, False))
    at = _core.build_tree(game, [], 10, "at_deal")
    # One deal per way round one ends in a call (5), each with 6 cards: 30 leaves after the deal.
    assert len(at.pseudo_leaves) == 5 and len(after.pseudo_leaves) == 30
    assert all(game.player_to_act(at.history(leaf)) == 2 for leaf in at.pseudo_leaves)
    assert sorted(after.history(int(after.parent[leaf])) for leaf in after.pseudo_leaves)[::6] == \
        sorted(at.history(leaf) for leaf in at.pseudo_leaves)
    rooted = _core.build_tree(game, at.history(int(at.pseudo_leaves[0])), 10, "at_deal")
    assert rooted.kind[0] == int(_core.NodeKind.CHANCE) and len(rooted.pseudo_leaves) == 0  # the root deal is dealt
    with pytest.raises(ValueError, match="'none', 'after_deal' or 'at_deal', got 'before'"):
        _core.build_tree(game, [], 10, "before")
    with pytest.raises(TypeError, match="chance_leaves"):
        _core.build_tree(game, [], 10, 3)


def test_a_subgame_rooted_at_the_deal_solves_each_board_as_alone():
    """A subgame rooted before the deal (check, raise, call; random beliefs) plays on each
    board what the board's own subgame plays from the posterior beliefs: a hand's
    counterfactual values on a board are scaled by its chance factor, which regret matching
    ignores. Linear CFR, 256 iterations, average policies equal to rounding."""
    game = leduc()
    rng = np.random.default_rng(1)
    deal = [1, 2, 1]
    beliefs = [rng.dirichlet(np.ones(6)) for _ in range(2)]
    joint_tree = _core.build_tree(game, deal, 10, "at_deal")
    joint = _core.SubgameSolver(game, joint_tree, beliefs[0], beliefs[1], solver="lcfr")
    joint.run(256)
    joint_policy = np.asarray(joint.average_policy())
    checked = 0
    for card in game.legal_actions(deal):
        f = np.asarray(game.chance_factors(deal, card))
        posterior = [b * f / (b * f).sum() for b in beliefs]
        tree = _core.build_tree(game, deal + [card], 10, "after_deal")
        alone = _core.SubgameSolver(game, tree, posterior[0], posterior[1], solver="lcfr")
        alone.run(256)
        policy = np.asarray(alone.average_policy())
        for n in tree.decision_nodes.tolist():
            for c in range(int(tree.first_child[n]), int(tree.first_child[n] + tree.num_children[n])):
                j = joint_tree.find(list(tree.history(c))[len(deal):])
                np.testing.assert_allclose(policy[c][f > 0], joint_policy[j][f > 0], atol=1e-8)
                checked += 1
    assert checked == 6 * 14  # 6 boards, 14 actions of round two each


@pytest.mark.parametrize("name", ["leduc", "leduc_nolimit"])
def test_exact_values_before_the_deal_are_the_boards_values_weighted_by_chance(name):
    """The oracle's answer at a PBS before the deal (a leaf with chance_leaves='at_deal')
    equals the chance-weighted sum of its answers after each card (the after_deal leaves):
    v(h) = sum_b f_b(h) Z_b v_b(h), Z_b the opponent's belief mass left by card b (the
    counterfactual convention of csrc/core/game.h, beliefs summing to one)."""
    game = leduc(name)
    oracle = _core.OracleNet(game, "lcfr", 128)
    rng = np.random.default_rng(2)
    beliefs = [rng.dirichlet(np.ones(6)) for _ in range(2)]
    deal = [1, 1]  # check check (limit), call call (no-limit): the deal
    assert game.player_to_act(deal) == 2
    for player in (0, 1):
        before = _core.net_values(oracle, game, [deal], player, beliefs[0], beliefs[1])[0]
        after = np.zeros(6)
        for card in game.legal_actions(deal):
            f = np.asarray(game.chance_factors(deal, card))
            posterior = [b * f for b in beliefs]
            mass = posterior[1 - player].sum()
            posterior = [b / b.sum() for b in posterior]
            after += f * mass * _core.net_values(oracle, game, [deal + [card]], player, posterior[0], posterior[1])[0]
        np.testing.assert_allclose(before, after, atol=1e-8)


def test_search_can_end_its_subgames_at_the_deal():
    """search.chance_leaves = 'at_deal': each deal is a leaf and a search root (1 + 5 roots on
    limit Leduc against 1 + 30 after the deal), whose subgame deals the card itself. Exact
    leaf values before and after the deal agree to rounding (the tests above), yet mode (a)'s
    figure moves: the round-one CFR trajectory is sensitive to differences of 1e-10 in its
    leaf values (measured: the iterates part after a few iterations; docs/results.md). Mode
    (b) differs also by design: one random stop for all six boards instead of one each."""
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings

    def run(chance_leaves: str) -> dict:
        settings = EvalSettings(net="oracle", depth=10, iterations=64, oracle_iterations=64, repeats=8,
                                full_game=False, chance_leaves=chance_leaves)
        return evaluate(leduc(), settings, progress=False)

    after, at = run("after_deal"), run("at_deal")
    assert at["chance_leaves"] == "at_deal" and "chance_leaves" not in after
    assert (after["search_roots"], at["search_roots"]) == (1 + 30, 1 + 5)
    for result in (after, at):  # measured 0.133 and 0.149 (mode a), 0.228 and 0.330 (mode b, N = 8)
        assert 0.0 < result["mode_a"]["exploitability"] < 0.2
        assert 0.0 < result["mode_b"][-1]["exploitability"] < 1.0
    assert run("at_deal")["mode_b"] == at["mode_b"]  # deterministic for a seed
    with pytest.raises(ValueError, match="search.chance_leaves must be one of after_deal, at_deal, got 'none'"):
        EvalSettings(chance_leaves="none").check()


@pytest.mark.parametrize("depth, roots", [(1, 191), (2, 98), (3, 67)])
def test_short_subgames_can_end_at_the_deal(depth, roots):
    """Subgames shorter than a round with chance_leaves='at_deal': a deal below a root is always
    a leaf (depth limit or not), and every leaf (a deal or a cut decision node) is a search root,
    the deal counting as one event of the next subgame. The roots, counted by a walk over the
    full tree: the 5 deals plus the decision nodes a multiple of `depth` events after the start
    or after a deal's chance node (after_deal: 186, 93, 62)."""
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings

    game = leduc()
    for history in ([], [2], [1, 2]):
        tree = _core.build_tree(game, history, depth, "at_deal")
        for leaf in tree.pseudo_leaves:
            assert game.player_to_act(tree.history(leaf)) == 2 or tree.depth[leaf] == depth
    settings = EvalSettings(net="oracle", depth=depth, iterations=32, oracle_iterations=32, repeats=2,
                            full_game=False, chance_leaves="at_deal")
    result = evaluate(game, settings, progress=False)
    assert result["search_roots"] == roots
    assert 0.0 < result["mode_a"]["exploitability"] < 0.5
