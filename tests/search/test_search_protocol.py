"""The mode-(b) protocol checked from the outside, independently of the C++ recursion.

1. Every subgame of a sampled full-game policy plays one iterate of a CFR-D run started
   from the beliefs that the policy itself induces at the subgame's root.
2. `evaluate_sampled` is the exploitability of the reach-weighted mixture of the sampled
   policies (sample k uses seed mix_seed(seed, k)), recomputed here in NumPy.
"""
import numpy as np
import pytest
from helpers import reference_cfr

import rebel
from rebel import _core as core

GAME = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
ITERATIONS, DEPTH = 32, 2
U64 = (1 << 64) - 1


@pytest.fixture(scope="module")
def search() -> core.TestTimeSearch:
    return core.TestTimeSearch(GAME, core.OracleNet(GAME, "lcfr", 32), "lcfr", DEPTH, ITERATIONS)


def mix_seed(seed: int, index: int) -> int:
    """The sample-seed mixer of csrc/search/test_time_search.cc (splitmix64 finaliser)."""
    z = (seed + 0x9E3779B97F4A7C15 * (index + 1)) & U64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & U64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & U64
    return z ^ (z >> 31)


def own_reaches(tree: core.PublicTree, policy: np.ndarray) -> np.ndarray:
    """reach[p, node, hand]: prior times player p's own action probabilities on the path."""
    return np.stack([reference_cfr.reach(tree, policy, p, np.asarray(GAME.hand_prior)) for p in (0, 1)])


def test_each_subgame_plays_a_cfr_d_iterate_from_the_beliefs_it_induces(search):
    full = search.full_tree
    policy = np.asarray(search.sampled_policy(7))
    reach = own_reaches(full, policy)
    depth = np.asarray(full.depth)
    roots = [n for n in full.decision_nodes if depth[n] % DEPTH == 0]
    assert len(roots) == search.num_search_roots
    net = core.OracleNet(GAME, "lcfr", 32)
    for root in roots:
        beliefs = [r / r.sum() if r.sum() > 0 else np.full(GAME.num_hands, 1 / GAME.num_hands) for r in reach[:, root]]
        sub = core.build_tree(GAME, full.history(root), DEPTH)
        to_full = {0: root}
        for s in sub.decision_nodes:
            for k in range(sub.num_children[s]):
                to_full[int(sub.first_child[s]) + k] = int(full.first_child[to_full[s]]) + k
        inner = [s for s in to_full if s != 0]
        played = policy[[to_full[s] for s in inner]]
        solver = core.SubgameSolver(GAME, sub, beliefs[0], beliefs[1], "lcfr", net)
        errors = []
        for i in range(ITERATIONS):
            if i % 2 == 0:  # the protocol stops at even iterations only
                errors.append(np.abs(np.asarray(solver.current_policy())[inner] - played).max())
            solver.step()
        assert min(errors) < 1e-9, f"subgame at {full.history(root)} plays no CFR-D iterate"


def test_sampled_evaluation_is_the_reach_weighted_mixture(search):
    full = search.full_tree
    parent, player = np.asarray(full.parent), np.asarray(full.player)
    report = search.evaluate_sampled(8, threads=2, seed=5)
    weighted = np.zeros((full.size, GAME.num_hands))
    weight = np.zeros_like(weighted)
    expected = []
    for k in range(8):
        policy = np.asarray(search.sampled_policy(mix_seed(5, k)))
        reach = own_reaches(full, policy)
        for n in range(1, full.size):
            w = reach[player[parent[n]], parent[n]]
            weighted[n] += w * policy[n]
            weight[n] += w
        if k + 1 in (1, 2, 4, 8):
            mixture = np.asarray(core.uniform_policy(GAME, full), dtype=float).copy()
            seen = weight > 0
            mixture[seen] = weighted[seen] / weight[seen]
            expected.append(rebel.exploitability(GAME, full, mixture)["exploitability"])
    assert list(report["num_policies"]) == [1, 2, 4, 8]
    np.testing.assert_allclose(report["exploitability"], expected, rtol=0, atol=1e-12)


def _searches() -> dict:
    """Searches of different kinds: exact leaves, a trained net with a policy-net warm start,
    a solver that plays its average at the stop, public chance (both leaf placements)."""
    from pathlib import Path

    pretrained = Path(rebel.__file__).resolve().parent / "nets" / "pretrained"
    net = core.MlpValueNet(GAME, str(pretrained / "1x4f.bin"), precision="fp32")
    policy_net = core.MlpPolicyNet(GAME, str(pretrained / "1x4f_policy.bin"), precision="fp32")
    leduc = rebel.make_game("leduc", {})
    leduc_net = core.MlpValueNet(leduc, str(pretrained / "leduc.bin"), precision="fp32")
    return {
        "oracle": lambda: core.TestTimeSearch(GAME, core.OracleNet(GAME, "lcfr", 32), "lcfr", DEPTH, ITERATIONS),
        "warm": lambda: core.TestTimeSearch(GAME, net, "lcfr", DEPTH, ITERATIONS, policy_net=policy_net,
                                            warm_iterations=15, warm_prior=10.0),
        "cfr-avg-play-avg": lambda: core.TestTimeSearch(GAME, net, "cfr-avg-play-avg", DEPTH, ITERATIONS),
        "leduc": lambda: core.TestTimeSearch(leduc, leduc_net, "lcfr", 2, 16),
        "leduc-at-deal": lambda: core.TestTimeSearch(leduc, leduc_net, "dcfr", 3, 16, chance_leaves="at_deal"),
    }


@pytest.mark.parametrize("kind", ["oracle", "warm", "cfr-avg-play-avg", "leduc", "leduc-at-deal"])
def test_samples_solved_together_are_the_samples_solved_one_at_a_time(kind):
    """sampled_policies shares the solves of samples that reach a subgame with the same PBS;
    each of its policies must still be sampled_policy's for that seed, bit for bit, on any
    number of threads, and sampled_sum over a range (solved together) must be the in-order
    sum of the one-sample ranges (each solved alone)."""
    search = _searches()[kind]()
    n = 40  # T = 16 or 32: several samples share each stop of the game's root
    seeds = [core.sample_seed(3, k) for k in range(n)]
    assert seeds[:3] == [mix_seed(3, k) for k in range(3)]
    together = np.asarray(search.sampled_policies(seeds, threads=2))
    one_by_one = np.stack([np.asarray(search.sampled_policy(s)) for s in seeds])
    assert together.shape == one_by_one.shape and together.shape[:2] == (n, search.full_tree.size)
    assert np.array_equal(together, one_by_one)
    assert np.array_equal(np.asarray(search.sampled_policies(seeds, threads=1)), together)
    alone = np.zeros(together.shape[1:])
    for k in range(n):
        alone += np.asarray(search.sampled_sum(k, k + 1, threads=1, seed=3))
    assert np.array_equal(np.asarray(search.sampled_sum(0, n, threads=2, seed=3)), alone)


def test_sampled_policies_of_no_seeds_and_bad_threads(search):
    assert np.asarray(search.sampled_policies([], threads=1)).shape == (0, search.full_tree.size, GAME.num_hands)
    with pytest.raises(ValueError, match="threads"):
        search.sampled_policies([1, 2], threads=0)


def test_shared_leaf_beliefs_bound_the_samples_solved_together(search):
    """evaluate_sampled hands sampled_policies chunks of samples whose leaf beliefs fit
    512 MiB: a sample holds at most one stop group per level of searches, each with the
    beliefs at one subgame's pseudo-leaves. Levels and leaf counts recounted here from the
    subgame trees."""
    levels, most_leaves = 0, 0
    pending = [([], 1)]
    while pending:
        history, level = pending.pop()
        tree = core.build_tree(GAME, history, DEPTH)
        leaves = [int(n) for n in tree.pseudo_leaves]
        levels, most_leaves = max(levels, level), max(most_leaves, len(leaves))
        pending += [(tree.history(n), level + 1) for n in leaves]
    hands = GAME.num_hands
    assert search.shared_bytes_per_sample == levels * most_leaves * 2 * hands * 8
    policy_bytes = search.full_tree.size * hands * 8
    assert search.samples_per_chunk == core.sample_chunk_size(policy_bytes, search.shared_bytes_per_sample) == 1024
    # The three bounds: 1,024 samples, 1 GiB of policies, 512 MiB of leaf beliefs; at least 1.
    assert core.sample_chunk_size(2**20, 2**19) == 1024
    assert core.sample_chunk_size(2**22, 2**10) == 256
    assert core.sample_chunk_size(2**10, 2**25) == 16
    assert core.sample_chunk_size(2**31, 2**31) == 1
