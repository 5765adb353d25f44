"""The policy net in training (policy.enabled): its replay buffer, config checks, a short run
that learns, checkpoints and resumes exactly, and `rebel eval --policy-net` on its result."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from rebel import _core
from rebel.config.train import ConfigError, PolicySection, load_train_config
from rebel.nets.policy_mlp import PolicyMLP
from rebel.train.checkpoint import load_checkpoint
from rebel.train.policy_trainer import PolicyReplay, PolicyTrainer
from tests.conftest import run_cli
from tests.train.test_train import TINY, epochs_of, metrics

HAS_POLICY_BINDINGS = hasattr(_core, "MlpPolicyNet")
needs_bindings = pytest.mark.skipif(not HAS_POLICY_BINDINGS, reason="the extension has no policy nets")


def _fake_step(rng: np.random.Generator, n: int, q: int = 5, H: int = 2, A: int = 3) -> SimpleNamespace:
    legal = rng.random((n, A)) < 0.7
    legal[:, 0] = True
    raw = rng.random((n, H, A)) * legal[:, None, :]
    return SimpleNamespace(policy_rows=rng.random((n, q)).astype(np.float32),
                           policy_targets=(raw / raw.sum(axis=2, keepdims=True)).astype(np.float32),
                           policy_legal=legal, policy_weights=rng.random((n, H)).astype(np.float32), policy_count=n)


def test_policy_replay_packs_flushes_subsamples_and_round_trips():
    rng = np.random.default_rng(0)
    replay = PolicyReplay(100, 5, 2, 3)
    step = _fake_step(rng, 4)
    replay.add_step(step)
    assert replay.added == 0  # pending until the epoch boundary
    assert replay.flush() == 4 and replay.added == 4
    ring = replay.buffer.state()
    rows, targets, legal, weights = replay.unpack(ring["rows"], ring["targets"])
    np.testing.assert_array_equal(rows, step.policy_rows)
    np.testing.assert_array_equal(targets, step.policy_targets)
    np.testing.assert_array_equal(legal, step.policy_legal)
    np.testing.assert_array_equal(weights, step.policy_weights)
    batch = replay.sample(7, np.random.default_rng(1))
    assert [a.shape for a in batch] == [(7, 5), (7, 2, 3), (7, 3), (7, 2)] and batch[2].dtype == bool
    # The state round-trips; pending nodes must be flushed first.
    other = PolicyReplay(100, 5, 2, 3)
    other.load_state(replay.state())
    assert other.added == 4
    replay.add_step(_fake_step(rng, 2))
    with pytest.raises(RuntimeError, match="flush"):
        replay.state()
    # The state at an earlier boundary stays writable while the lookahead holds the later nodes.
    small = PolicyReplay(4, 5, 2, 3, lookahead=2)
    small.add_step(_fake_step(rng, 4))
    small.flush()
    first = small.ring_state()
    small.add_step(_fake_step(rng, 2))
    small.flush()
    np.testing.assert_array_equal(small.ring_state(upto=4)["rows"], first["rows"])
    small.add_step(_fake_step(rng, 1))
    small.flush()
    with pytest.raises(ValueError, match="overwriting"):
        small.ring_state(upto=4)
    # max_nodes_per_step: the same nodes of the same step whatever the order, at most that many.
    a, b = PolicyReplay(100, 5, 2, 3, max_nodes_per_step=3, seed=7), PolicyReplay(100, 5, 2, 3, 3, seed=7)
    s1, s2 = _fake_step(rng, 10), _fake_step(rng, 2)
    a.add_step(s1)
    a.add_step(s2)
    b.add_step(s2)
    b.add_step(s1)
    assert a.flush() == b.flush() == 5
    rows_a = {r.tobytes() for r in a.buffer.state()["rows"]}
    assert rows_a == {r.tobytes() for r in b.buffer.state()["rows"]}
    assert rows_a <= {r.tobytes() for r in np.concatenate([s1.policy_rows, s2.policy_rows])}


def test_policy_trainer_fits_a_fixed_policy():
    """On one node whose target is known, the loss falls to the target's entropy (KL -> 0)."""
    import torch

    torch.manual_seed(0)
    rng = np.random.default_rng(2)
    step = _fake_step(rng, 1)
    batch = (step.policy_rows, step.policy_targets, step.policy_legal, step.policy_weights)
    trainer = PolicyTrainer(PolicyMLP(5, 2, 3, hidden=16, layers=1), PolicySection(lr=3e-2, batch_size=4,
                                                                                   epoch_examples=64),
                            torch.device("cpu"))
    t = step.policy_targets.astype(np.float64)
    entropy = -np.where(t > 0, t * np.log(np.where(t > 0, t, 1)), 0).sum(axis=2)
    floor = float((step.policy_weights * entropy).sum() / step.policy_weights.sum())
    first = trainer.loss_on(batch)
    for _ in range(5):
        trainer.train_epoch(lambda n: tuple(np.repeat(a, n, axis=0) for a in batch))  # type: ignore[misc]
    assert first - floor > 0.05 and trainer.loss_on(batch) - floor < 1e-3


@pytest.mark.parametrize("overrides, message", [
    (["search.warm_start=15"], "set policy.enabled=true"),
    (["policy.enabled=true", "search.warm_start=15", "search.solver=cfr-avg-modified"], "has no warm start"),
    (["policy.enabled=true", "search.warm_start=15", "search.off_path=floor"], "off_path 'skip' only"),
    (["policy.enabled=true", "selfplay.backend=ray"], "selfplay.backend=ray"),
    (["policy.enabled=true", "search.warm_start=15", "evaluation.backend=ray"], "evaluation.backend=ray"),
    (["search.warm_start=-1"], "search.warm_start must be"),
    (["search.warm_prior=3"], "needs a warm start"),
    (["search.warm_prior=-1"], "search.warm_prior must be a finite number >= 0"),
    (["policy.enabled=true", "search.warm_start=15", "search.solver=lfp", "search.warm_prior=3"], "has none"),
    (["policy.max_nodes_per_step=-1"], "policy.max_nodes_per_step"),
    (["policy.batch_size=1024", "policy.epoch_examples=512"], "policy.epoch_examples"),
])
def test_policy_config_mistakes_are_named(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_train_config(None, overrides)


def test_an_fp_solver_warm_starts_with_any_off_path():
    cfg = load_train_config(None, ["policy.enabled=true", "search.warm_start=15", "search.solver=lfp",
                                   "search.off_path=floor"])
    assert cfg.search.warm_start == 15 and cfg.policy.enabled


POLICY = TINY + ["selfplay.threads=1", "trainer.torch_threads=1", "run.checkpoint_every=1",
                 "evaluation.every=2", "evaluation.final=false", "evaluation.references=false",
                 "evaluation.heldout_steps=32", "policy.enabled=true", "policy.hidden=64", "policy.lr=3e-3",
                 "policy.epoch_examples=2560", "policy.batch_size=256", "search.warm_start=15"]


@pytest.fixture(scope="module")
def policy_runs(tmp_path_factory):
    """A 4-epoch run, and the same run stopped after 2 epochs then resumed to 4."""
    root = tmp_path_factory.mktemp("policy")
    full = run_cli("train", "quick", *POLICY, "run.epochs=4", f"run.dir={root}", "run.name=full", "--json",
                   timeout=300)
    assert full.returncode == 0, full.stderr
    part = run_cli("train", "quick", *POLICY, "run.epochs=2", f"run.dir={root}", "run.name=part", "--json",
                   timeout=300)
    assert part.returncode == 0, part.stderr
    resumed = run_cli("train", "--resume", str(root / "part"), "run.epochs=4", "--json", timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    return root, json.loads(full.stdout)


@needs_bindings
@pytest.mark.slow
def test_policy_training_learns_checkpoints_and_resumes_exactly(policy_runs):
    root, summary = policy_runs
    records = epochs_of(metrics(root / "full"))
    assert records[1]["policy_loss"] is None  # no D_pi before the first epoch boundary
    losses = [records[e]["policy_loss"] for e in (2, 3, 4)]
    assert losses[-1] < losses[0], losses
    assert records[4]["policy_nodes"] > 0 and records[4]["policy_replay_size"] == records[4]["policy_nodes"]
    for r in metrics(root / "full"):  # the policy net's training time: a part of train_seconds
        if r.get("epoch", 0) > 0 and r.get("kind") is None:
            assert 0 <= r["policy_train_seconds"] <= r["train_seconds"], r
    for epoch in (2, 4):  # the held-out loss: a cross-entropy, never below the targets' entropy (Gibbs)
        r = records[epoch]
        assert r["heldout_policy_entropy"] <= r["heldout_policy_loss"] and r["heldout_policy_entropy"] < \
            r["heldout_policy_uniform"], r
    assert summary["policy_weights"] == str(root / "full" / "policy.bin")
    state = load_checkpoint(root / "full" / "checkpoint.pt")
    assert {"trainer", "replay", "rng"} <= set(state["policy"])
    # Resumed at epoch 2: the same epochs, losses, exploitabilities and weights, exactly.
    after = epochs_of(metrics(root / "part"))
    assert sorted(after) == sorted(records) == list(range(5))
    for epoch in range(5):
        assert after[epoch] == records[epoch], epoch
    for name in ("weights.bin", "policy.bin"):
        assert (root / "full" / name).read_bytes() == (root / "part" / name).read_bytes(), name


@needs_bindings
@pytest.mark.slow
def test_eval_with_the_trained_policy_net_and_its_bad_inputs(policy_runs):
    root, _ = policy_runs
    run = root / "full"
    base = ["eval", "--dice", "1", "--faces", "3", "--net", str(run / "weights.bin"), "--iters", "128",
            "--repeats", "64", "--threads", "1", "--no-mode-a", "--json"]
    ev = run_cli(*base, "--policy-net", str(run / "policy.bin"), "--warm-start", "15")
    assert ev.returncode == 0, ev.stderr
    out = json.loads(ev.stdout)
    assert out["warm_start"] == 15 and out["policy_net"] == str(run / "policy.bin")
    # The run's last evaluation (epoch 4) used the same nets, search and seed.
    last = epochs_of(metrics(run))[4]["exploitability"]
    assert out["mode_b"][-1]["exploitability"] == pytest.approx(last, abs=1e-12)
    # The regret prior: the CLI's figure is the core search's with the same settings.
    ev = run_cli(*base, "--policy-net", str(run / "policy.bin"), "--warm-start", "15", "--warm-prior", "3",
                 "--precision", "fp32")
    assert ev.returncode == 0, ev.stderr
    out = json.loads(ev.stdout)
    assert out["warm_prior"] == 3
    from rebel import _core
    from rebel.games import make

    game = make("liars_dice", num_dice=1, num_faces=3)
    value_net = _core.MlpValueNet(game, str(run / "weights.bin"), precision="fp32")
    policy_net = _core.MlpPolicyNet(game, str(run / "policy.bin"), precision="fp32")
    search = _core.TestTimeSearch(game, value_net, "lcfr", 2, 128, policy_net=policy_net, warm_iterations=15,
                                  warm_prior=3.0)
    direct = float(search.evaluate_sampled(64, threads=1, seed=0)["exploitability"][-1])
    assert out["mode_b"][-1]["exploitability"] == pytest.approx(direct, abs=1e-12)
    _check_bad_policy_inputs(run, base)


@needs_bindings
@pytest.mark.slow
def test_warm_start_experiment_evaluates_a_policy_training_run(policy_runs, tmp_path):
    """experiments/warm_start.py --run: a policy.enabled run's value net with its own policy net
    under the protocol rows; each row is the core search's figure with the same nets and
    settings (seed 0, 2 threads), and a run without policy.bin is named, not crashed on."""
    from tests.helpers.scripts import load

    warm_start = load("warm_start")
    root, _ = policy_runs
    run = root / "full"
    assert warm_start.main(["--run", str(run), "--rows", "warm_T128_P3,cold_T128", "--repeats", "32",
                            "--seeds", "0"]) == 0
    rows = json.loads((run / "warm_eval.json").read_text())["rows"]
    assert list(rows) == ["warm_T128_P3", "cold_T128"]
    assert (rows["warm_T128_P3"]["warm_iterations"], rows["warm_T128_P3"]["warm_prior"]) == (15, 3.0)
    assert rows["cold_T128"]["warm_iterations"] == 0
    from rebel.games import make

    game = make("liars_dice", num_dice=1, num_faces=3)
    value_net = _core.MlpValueNet(game, str(run / "weights.bin"), precision="fp32")
    policy_net = _core.MlpPolicyNet(game, str(run / "policy.bin"), precision="fp32")
    warm = _core.TestTimeSearch(game, value_net, "lcfr", 2, 128, policy_net=policy_net, warm_iterations=15,
                                warm_prior=3.0)
    cold = _core.TestTimeSearch(game, value_net, "lcfr", 2, 128)
    for name, search in (("warm_T128_P3", warm), ("cold_T128", cold)):
        direct = float(search.evaluate_sampled(32, threads=2, seed=0)["exploitability"][-1])
        assert rows[name]["runs"][0]["exploitability"] == pytest.approx(direct, abs=1e-12), name
    table = (run / "warm_eval.md").read_text()
    assert "warm start K = 15" in table and "| warm_T128_P3 | 128 | 15 | 3 |" in table
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("config.yaml", "weights.bin", "metrics.jsonl"):
        (bare / name).write_bytes((run / name).read_bytes())
    with pytest.raises(SystemExit, match="no policy.bin there"):
        warm_start.main(["--run", str(bare), "--rows", "cold_T8", "--repeats", "2", "--seeds", "0"])


def _check_bad_policy_inputs(run: Path, base: list[str]) -> None:
    cases = [
        (["--policy-net", str(run / "weights.bin"), "--warm-start", "15"], "is a value net, not a policy net"),
        (["--warm-start", "15"], "needs a policy net"),
        (["--policy-net", str(run / "policy.bin")], "search.warm_start is 0"),
        (["--policy-net", str(run / "policy.bin"), "--warm-start", "15", "--solver", "cfr-avg"], "no warm start"),
        (["--policy-net", str(run / "policy.bin"), "--warm-start", "15", "--off-path", "floor"], "'skip' only"),
        (["--policy-net", str(run / "missing.bin"), "--warm-start", "15"], "is not a file"),
        (["--policy-net", str(run / "policy.bin"), "--warm-start", "-1"], "--warm-start must be >= 0"),
        (["--policy-net", str(run / "policy.bin"), "--warm-start", "15", "--backend", "ray"], "backend ray"),
        (["--policy-net", str(run / "policy.bin"), "--warm-start", "15", "--warm-prior", "-1"], "finite number >= 0"),
        (["--policy-net", str(run / "policy.bin"), "--warm-start", "15", "--warm-prior", "1", "--solver", "lfp"],
         "has none"),
        (["--warm-prior", "1"], "needs a warm start"),
    ]
    for extra, message in cases:
        r = run_cli(*base, *extra)
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, (extra, r.stderr)


def test_eval_refuses_a_policy_net_of_another_game(tmp_path):
    """A policy file sized for 1x4f on 1x3f, and warm starts without a policy net: exit 2 (no bindings needed)."""
    import rebel
    from rebel.nets.policy_mlp import export_policy_weights

    other = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
    export_policy_weights(PolicyMLP.for_game(other, hidden=8, layers=1), tmp_path / "p.bin")
    base = ["eval", "--dice", "1", "--faces", "3", "--iters", "8", "--repeats", "2", "--threads", "1",
            "--no-mode-a", "--json"]
    r = run_cli(*base, "--policy-net", str(tmp_path / "p.bin"), "--warm-start", "15")
    assert r.returncode == 2 and "do not fit a policy net" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = run_cli(*base, "--warm-start", "15")
    assert r.returncode == 2 and "needs a policy net" in r.stderr, r.stderr


def test_policy_loss_references_are_the_loss_of_a_perfect_and_a_uniform_net():
    """policy_loss_references: the loss at logits = log(targets) is the targets' weighted
    entropy, at logits = 0 (uniform over the legal actions) the weighted mean of log(#legal)."""
    from rebel.nets.policy_mlp import policy_loss, policy_loss_references

    step = _fake_step(np.random.default_rng(3), 40)
    targets, legal, weights = (np.asarray(a) for a in (step.policy_targets, step.policy_legal, step.policy_weights))
    refs = policy_loss_references(targets, legal, weights)
    t, lg, w = (torch.from_numpy(np.ascontiguousarray(a)) for a in (targets.astype(np.float64), legal, weights))
    perfect = torch.log(torch.where(t > 0, t, torch.full_like(t, 1e-300)))
    assert float(policy_loss(perfect, t, lg, w.double())) == pytest.approx(refs["target_entropy"], abs=1e-9)
    assert float(policy_loss(torch.zeros_like(t), t, lg, w.double())) == pytest.approx(refs["uniform"], abs=1e-9)
    assert 0 < refs["target_entropy"] < refs["uniform"]


@needs_bindings
def test_the_held_out_set_gains_the_walks_d_pi_and_keeps_its_values():
    """With policy.enabled the held-out walk also keeps D_pi of its exact solves (at most
    HELDOUT_POLICY_NODES nodes a step, the actor's beliefs as weights); its value rows and
    labels are those of the walk without it, bit for bit."""
    from rebel.train.evaluation import HELDOUT_POLICY_NODES, HeldOutSet

    plain_cfg = load_train_config(None, TINY + ["evaluation.heldout_steps=24"])
    policy_cfg = load_train_config(None, TINY + ["evaluation.heldout_steps=24", "policy.enabled=true"])
    game = plain_cfg.game.make()
    plain, with_policy = HeldOutSet.generate(game, plain_cfg), HeldOutSet.generate(game, policy_cfg)
    assert plain.policy is None and with_policy.policy is not None
    assert np.array_equal(plain.rows, with_policy.rows) and np.array_equal(plain.targets, with_policy.targets)
    rows, targets, legal, weights = with_policy.policy
    n = rows.shape[0]
    assert 0 < n <= 24 * HELDOUT_POLICY_NODES and targets.shape == (n, game.num_hands, game.num_actions)
    assert np.allclose(weights.sum(axis=1), 1.0, atol=1e-5)  # normalised beliefs of the actor
    reached = weights > 0
    sums = targets.sum(axis=2)
    assert np.allclose(sums[reached], 1.0, atol=1e-4)  # an average policy per reached hand
    assert not (targets * ~legal[:, None, :]).any()

