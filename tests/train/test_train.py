"""Training: replay buffer, loss and schedule, configs, a quick run that must learn, and
stop / kill / resume with the single-thread run continuing exactly."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from rebel.config.train import ConfigError, load_train_config, valid_keys
from rebel.nets.value_mlp import ValueMLP
from rebel.train.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from rebel.train.replay import ReplayBuffer
from rebel.train.trainer import Trainer, value_loss
from tests.conftest import REPO_ROOT, default_sigint, liars_dice, run_cli

# A tiny 1x3f run: a few seconds per epoch on one core.
TINY = ["game.num_dice=1", "game.num_faces=3", "search.iterations=128", "replay.capacity=20000",
        "trainer.epoch_examples=2560", "trainer.batch_size=256", "trainer.lr=1e-3",
        "evaluation.repeats=64", "evaluation.heldout_steps=128", "evaluation.threads=1"]
TIMING_KEYS = {"wall_seconds", "training_seconds", "generation_rate", "train_seconds", "loop_overhead", "eval_seconds",
               "policy_train_seconds"}


def metrics(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def epochs_of(records: list[dict]) -> dict[int, dict]:
    return {r["epoch"]: {k: v for k, v in r.items() if k not in TIMING_KEYS}
            for r in records if "epoch" in r and r.get("kind") is None}


# ----------------------------------------------------------------------------- units


def test_replay_buffer_is_fifo_with_uniform_sampling():
    buf = ReplayBuffer(capacity=100, row_size=2, target_size=1, lookahead=10)
    for i in range(0, 250, 2):
        buf.add(np.array([[i, 0], [i + 1, 0]], np.float32), np.array([[i], [i + 1]], np.float32))
    assert buf.added == 250 and buf.size() == 100
    rows, targets = buf.sample(20000, np.random.default_rng(0))
    assert rows[:, 0].min() == 150 and rows[:, 0].max() == 249  # only the last `capacity`
    np.testing.assert_array_equal(rows[:, 0], targets[:, 0])
    counts = np.bincount(rows[:, 0].astype(int) - 150, minlength=100)
    assert counts.min() > 120 and counts.max() < 290  # uniform: 200 each on average
    # A prefix of the stream: the last `capacity` of the first 240 examples (the ring keeps
    # `lookahead` = 10 slots for examples generated ahead of the trainer).
    rows, _ = buf.sample(5000, np.random.default_rng(1), upto=240)
    assert rows[:, 0].min() == 140 and rows[:, 0].max() == 239
    with pytest.raises(ValueError, match="overwritten"):
        buf.sample(10, np.random.default_rng(1), upto=239)


def test_replay_buffer_state_round_trip_and_thread_safe_adds():
    buf = ReplayBuffer(capacity=1000, row_size=3, target_size=2, lookahead=0)

    def add(k):
        for _ in range(100):
            buf.add(np.full((2, 3), k, np.float32), np.full((2, 2), k, np.float32))

    threads = [threading.Thread(target=add, args=(k,)) for k in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert buf.added == 800
    state = buf.state()
    for k in range(4):  # every add stayed whole: rows and targets of one add agree
        assert (state["rows"][:, 0] == k).sum() == 200
    np.testing.assert_array_equal(state["rows"][:, 0], state["targets"][:, 1])
    other = ReplayBuffer(capacity=1000, row_size=3, target_size=2)
    other.load_state(state)
    np.testing.assert_array_equal(other.state()["rows"], state["rows"])
    with pytest.raises(ValueError, match="do not fit"):
        buf.add(np.zeros((2, 4), np.float32), np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="does not fit"):
        ReplayBuffer(capacity=1000, row_size=4, target_size=2).load_state(state)


def test_value_loss_is_the_originals():
    pred = torch.tensor([[0.0, 0.5, 3.0, -2.0]])
    target = torch.zeros(1, 4)
    # x^2 for |x| <= 1, 2|x| - 1 beyond; mean over hands.
    assert value_loss(pred, target).item() == pytest.approx((0 + 0.25 + 5 + 3) / 4)


def test_learning_rate_halves_every_400_epochs_at_most_twice():
    config = load_train_config()
    trainer = Trainer(ValueMLP(4, 2, hidden=8), config.trainer)
    assert [trainer.lr_at(e) for e in (0, 399, 400, 799, 800, 5000)] == \
        [3e-4, 3e-4, 1.5e-4, 1.5e-4, 7.5e-5, 7.5e-5]


# solve.yaml: rebel solve's
TRAIN_CONFIGS = sorted(p for p in (REPO_ROOT / "configs").glob("*.yaml") if p.stem != "solve")


@pytest.mark.parametrize("path", TRAIN_CONFIGS, ids=lambda p: p.stem)
def test_every_shipped_config_loads(path):
    from rebel.config.alphazero import is_alphazero_yaml, load_alphazero_config

    if is_alphazero_yaml(path.read_text()):
        config = load_alphazero_config(str(path))
        assert config.game.name == "mnk" and config.mcts.simulations >= 1
        return
    config = load_train_config(str(path))
    assert config.search.depth >= 1


@pytest.mark.parametrize("game", ["1x4f", "1x5f", "1x6f", "2x3f"])
def test_paper_settings_and_the_measured_levers(game):
    paper = load_train_config(str(REPO_ROOT / "configs" / f"liars_dice_{game}_paper.yaml"))
    ours = load_train_config(str(REPO_ROOT / "configs" / f"liars_dice_{game}.yaml"))
    for c in (paper, ours):  # the paper's search, net and optimiser in both
        assert (c.search.solver, c.search.depth, c.search.iterations, c.search.epsilon) == ("lcfr", 2, 1024, 0.25)
        assert (c.trainer.lr, c.trainer.batch_size, c.trainer.epoch_examples,
                c.trainer.grad_clip) == (3e-4, 512, 25600, 5.0)
        assert (c.model.hidden, c.model.layers, c.replay.capacity, c.evaluation.repeats) == (256, 2, 2_000_000, 1024)
        assert c.game.num_dice == int(game[0]) and c.game.num_faces == int(game[2])
    assert (paper.trainer.train_ratio, paper.trainer.ema_decay, paper.search.precision) == (4.0, 0.0, "fp32")
    assert (ours.trainer.train_ratio, ours.trainer.ema_decay, ours.search.precision) == (16.0, 0.998, "auto")
    assert paper.selfplay.iterations is None and paper.trainer.lr_max_halvings == 2
    # 2x3f, where the net is the limit: self-play at T = 256 with a constant learning rate
    # (measured in docs/performance.md); the evaluations keep the paper's T = 1024 above.
    assert (ours.selfplay.iterations, ours.trainer.lr_max_halvings) == ((256, 0) if game == "2x3f" else (None, 2))


def test_weight_average_follows_each_step_and_survives_a_checkpoint():
    from rebel.config.train import TrainerSection

    torch.manual_seed(0)
    settings = TrainerSection(epoch_examples=64, batch_size=32, lr=1e-2, ema_decay=0.75)
    trainer = Trainer(ValueMLP(6, 2, hidden=8, layers=1), settings)
    rng = np.random.default_rng(0)
    sample = lambda n: (rng.standard_normal((n, 6)).astype(np.float32), rng.standard_normal((n, 2)).astype(np.float32))  # noqa: E731
    average = [p.detach().clone() for p in trainer.model.parameters()]
    original_step = trainer.optimizer.step

    def step_and_track(*args, **kwargs):  # the average after each optimizer step, by hand
        out = original_step(*args, **kwargs)
        for a, p in zip(average, trainer.model.parameters()):
            a.mul_(0.75).add_(p.detach(), alpha=0.25)
        return out

    trainer.optimizer.step = step_and_track
    trainer.train_epoch(sample)  # two steps
    for a, e in zip(average, trainer.inference_model().parameters()):
        torch.testing.assert_close(e, a, rtol=1e-6, atol=1e-7)
    assert trainer.inference_model() is not trainer.model
    assert not torch.equal(next(trainer.model.parameters()), next(trainer.inference_model().parameters()))

    restored = Trainer(ValueMLP(6, 2, hidden=8, layers=1), settings)
    restored.load_state(trainer.state())
    for a, b in zip(trainer.inference_model().parameters(), restored.inference_model().parameters()):
        assert torch.equal(a, b)
    assert trainer.selfplay_model() is trainer.inference_model()  # selfplay_weights="average", the default
    no_average = Trainer(ValueMLP(6, 2, hidden=8, layers=1), TrainerSection(epoch_examples=64, batch_size=32))
    assert no_average.inference_model() is no_average.model and no_average.state()["ema"] is None
    assert no_average.selfplay_model() is no_average.model
    with pytest.raises(ValueError, match="no moving average"):
        restored.load_state(no_average.state())


@pytest.mark.parametrize("override, message", [
    ("trainer.lrr=1", "unknown config key 'trainer.lrr'"),
    ("trainer.lr=abc", "trainer.lr"),
    ("search.depth=0", "search.depth must be >= 1"),
    ("search.solver=xyz", "search.solver"),
    ("search.off_path=sometimes", "search.off_path"),
    ("run.name=a/b", "run.name"),
    ("game.num_dice=0", "num_dice"),
    ("oops", "section.key=value"),
    ("trainer.ema_decay=1.0", "trainer.ema_decay must lie in"),
    ("trainer.selfplay_weights=current", "trainer.selfplay_weights must be one of average, raw, got 'current'"),
    ("search.precision=fp16", "search.precision must be one of fp32, bf16, int16, auto"),
    ("evaluation.precision=half", "evaluation.precision must be one of fp32, bf16, int16, auto"),
    ("run.snapshot_every=-1", "run.snapshot_every must be >= 0"),
    ("selfplay.iterations=1", "selfplay.iterations must be in"),
    ("model.value_scale=0", "model.value_scale must be > 0 or null"),
    ("model.value_scale=-100", "model.value_scale must be > 0 or null"),
    ("evaluation.seeds=0", "evaluation.seeds must be >= 1"),
])
def test_config_mistakes_are_named(override, message):
    with pytest.raises(ConfigError, match=message):
        load_train_config(None, [override])


def test_keep_best_without_evaluations_is_named():
    with pytest.raises(ConfigError, match="evaluation.keep_best needs evaluations to choose from"):
        load_train_config(None, ["evaluation.keep_best=true", "evaluation.every=0", "evaluation.final=false"])


def test_selfplay_iterations_set_only_self_plays_solver(tmp_path, monkeypatch):
    """selfplay.iterations is the T of self-play's subgames; the run's evaluations, held-out
    labels and references keep search.iterations (the protocol)."""
    from rebel import _core
    from rebel.config.train import selfplay_iterations
    from rebel.train import run as run_module
    from rebel.train.evaluation import heldout_walk
    from rebel.train.rundir import RunDirectory

    base = ["game.num_dice=1", "game.num_faces=3", "search.iterations=64", "selfplay.threads=1"]
    assert selfplay_iterations(load_train_config(None, base)) == 64
    config = load_train_config(None, base + ["selfplay.iterations=8"])
    assert selfplay_iterations(config) == 8 and config.search.iterations == 64

    made = []
    original = _core.SelfPlayGenerator

    def recording_generator(*args, **kwargs):
        made.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(_core, "SelfPlayGenerator", recording_generator)
    training = run_module.Training(config, RunDirectory.create(tmp_path / "run", "{}"), show_progress=False)
    training.pool.stop(cancel_running=True)
    assert [k["iterations"] for k in made] == [8]
    next(heldout_walk(training.game, config))
    assert made[-1]["full_depth"] and made[-1]["iterations"] == 64


@pytest.mark.parametrize("selfplay_weights", ["average", "raw"])
def test_selfplay_plays_the_weights_asked_and_exports_the_average(tmp_path, monkeypatch, selfplay_weights):
    """trainer.selfplay_weights=raw: the self-play loops get the trained weights after every
    epoch, while weights.bin (and evaluation) stay the moving average; "average" gives the
    loops the average too."""
    from rebel.nets.value_mlp import weights_to_bytes
    from rebel.train import run as run_module
    from rebel.train.rundir import RunDirectory

    config = load_train_config(None, [*TINY, "selfplay.threads=1", "trainer.torch_threads=1", "run.epochs=2",
                                      "trainer.ema_decay=0.9", f"trainer.selfplay_weights={selfplay_weights}",
                                      "evaluation.every=0", "evaluation.final=false",
                                      "evaluation.references=false", "evaluation.heldout_steps=0"])
    training = run_module.Training(config, RunDirectory.create(tmp_path / "run", "{}"), show_progress=False)
    installed: list[bytes] = []
    original = training.pool.install_weights
    monkeypatch.setattr(training.pool, "install_weights", lambda data: (installed.append(data), original(data))[1])
    training.run()
    raw, average = weights_to_bytes(training.trainer.model), weights_to_bytes(training.trainer.inference_model())
    assert raw != average
    assert installed[-1] == (raw if selfplay_weights == "raw" else average)
    # weights.bin is the average, naming its run's game and search (format version 3)
    from rebel.config.train import trained_net_metadata
    assert (tmp_path / "run" / "weights.bin").read_bytes() == weights_to_bytes(
        training.trainer.inference_model(), trained_net_metadata(training.config))


def test_unknown_key_error_names_the_closest_key():
    with pytest.raises(ConfigError) as e:
        load_train_config(None, ["selfplay.thread=3"])
    assert str(e.value).endswith("unknown config key 'selfplay.thread'; did you mean 'selfplay.threads'?")
    with pytest.raises(ConfigError) as e:  # nothing close: its section's keys, not every key
        load_train_config(None, ["trainer.xyzzy=3"])
    assert "the keys of 'trainer': lr, " in str(e.value) and "selfplay.threads" not in str(e.value)
    assert "trainer.lr" in valid_keys()


def test_in_run_evaluation_over_seeds_is_the_protocols_mean_and_sd(tmp_path):
    """evaluation.seeds = 3: the record is the mean of `rebel eval`'s mode (b) figures for
    seeds s, s + 1, s + 2 (the same code path taken one seed at a time, compared exactly), with
    each seed's figure and the sample sd beside it, as the protocol reports them; the progress
    counts every seed's samples."""
    from rebel.nets.value_mlp import export_weights, to_native
    from rebel.search.evaluate import evaluate
    from rebel.search.settings import EvalSettings
    from rebel.train.evaluation import evaluation_steps, search_exploitability

    config = load_train_config(None, ["game.num_dice=1", "game.num_faces=3", "search.iterations=64",
                                      "evaluation.repeats=16", "evaluation.threads=1", "evaluation.seed=4",
                                      "evaluation.seeds=3"])
    game = liars_dice(1, 3)
    torch.manual_seed(0)
    model = ValueMLP.for_game(game, hidden=16)
    export_weights(model, tmp_path / "w.bin")
    seen: list[int] = []
    result = search_exploitability(game, to_native(model, game), config, progress=seen.append)
    singles = []
    for seed in (4, 5, 6):
        settings = EvalSettings(net=str(tmp_path / "w.bin"), iterations=64, repeats=16, threads=1, seed=seed,
                                mode_a=False, full_game=False, precision="fp32")
        singles.append(evaluate(game, settings)["mode_b"][-1]["exploitability"])
    assert len(set(singles)) == 3  # the seeds differ, so the mean is not one seed's figure
    assert result["exploitability_by_seed"] == {4: singles[0], 5: singles[1], 6: singles[2]}
    assert result["exploitability"] == pytest.approx(np.mean(singles), abs=1e-15)
    assert result["exploitability_sd"] == pytest.approx(np.std(singles, ddof=1), abs=1e-15)
    assert result["by_num_policies"][16] == pytest.approx(result["exploitability"], abs=1e-15)
    assert evaluation_steps(game, config) == 48 and max(seen) == 48
    one = search_exploitability(game, to_native(model, game), load_train_config(
        None, ["game.num_dice=1", "game.num_faces=3", "search.iterations=64", "evaluation.repeats=16",
               "evaluation.threads=1", "evaluation.seed=5"]))
    assert one["exploitability"] == singles[1] and "exploitability_by_seed" not in one


# ----------------------------------------------------------------------------- runs


def test_quick_training_learns(tmp_path):
    """A short run: the trained net's search is far less exploitable than the random net's,
    and the net's error on the oracle-labelled held-out set falls. One self-play thread makes
    the run a deterministic function of the seed (and the CPU's kernel), so CPU contention
    cannot change the outcome (with two threads the example order depends on timing; one
    such run ended at 0.068 on a loaded machine). Measured with one thread: 0.0145 / 0.0040
    (fp32, seeds 0 / 1), 0.0071 / 0.0081 (bf16)."""
    r = run_cli("train", "quick", *TINY, "selfplay.threads=1", "run.epochs=16", "evaluation.every=8",
                f"run.dir={tmp_path}", "run.name=q", "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    records = epochs_of(metrics(tmp_path / "q"))
    start, end = records[0], records[16]
    assert start["exploitability"] > 0.2                       # random init
    assert end["exploitability"] < 0.25 * start["exploitability"]
    assert end["exploitability"] < 0.05
    assert end["heldout_mae"] < 0.5 * start["heldout_mae"]
    assert summary["evaluation"]["exploitability"] == end["exploitability"]
    # Self-play runs this CPU's fastest kernel (auto); the evaluation runs the net in fp32.
    assert end["eval_precision"] == "fp32" and end["net_precision"] in ("fp32", "bf16", "int16")
    refs = summary["references"]
    assert refs["zero_net_exploitability"] > 0.3 and refs["full_game_exploitability"] < 0.01
    assert (tmp_path / "q" / "config.yaml").is_file() and (tmp_path / "q" / "tb").is_dir()
    # The exported net works directly with `rebel eval` (fp32 by default, as the run's evaluation).
    ev = run_cli("eval", "--dice", "1", "--faces", "3", "--net", str(tmp_path / "q" / "weights.bin"),
                 "--iters", "128", "--repeats", "64", "--threads", "1", "--no-mode-a", "--json")
    assert ev.returncode == 0, ev.stderr
    assert json.loads(ev.stdout)["mode_b"][-1]["exploitability"] == pytest.approx(end["exploitability"], abs=1e-12)


def test_keep_best_keeps_the_net_with_the_lowest_in_run_figure(tmp_path):
    """evaluation.keep_best: best.bin is the net of the evaluation with the lowest figure (the
    random net's and the final one's included), byte for byte the snapshot of that epoch; every
    evaluated epoch records the choice so far, and the summary names it."""
    r = run_cli("train", "quick", *TINY, "selfplay.threads=1", "trainer.torch_threads=1", "run.epochs=6",
                "run.snapshot_every=1", "evaluation.every=2", "evaluation.keep_best=true",
                "evaluation.references=false", f"run.dir={tmp_path}", "run.name=b", "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    records = epochs_of(metrics(tmp_path / "b"))
    figures = {e: rec["exploitability"] for e, rec in records.items() if "exploitability" in rec}
    assert sorted(figures) == [0, 2, 4, 6]
    chosen = min(figures, key=lambda e: (figures[e], e))
    assert summary["best"]["epoch"] == chosen
    assert summary["best"]["exploitability"] == figures[chosen]
    assert summary["best"]["weights"] == str(tmp_path / "b" / "best.bin")
    best = (tmp_path / "b" / "best.bin").read_bytes()
    assert best == (tmp_path / "b" / "snapshots" / f"epoch_{chosen:06d}.bin").read_bytes()
    for epoch in (2, 4, 6):  # the choice so far, as each evaluation left it
        so_far = min((e for e in figures if e <= epoch), key=lambda e: (figures[e], e))
        assert records[epoch]["best_epoch"] == so_far
        assert records[epoch]["best_exploitability"] == figures[so_far]
    assert load_checkpoint(tmp_path / "b" / "checkpoint.pt")["best"]["record"]["epoch"] == chosen


def _train_process(args: list[str]) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.Popen([sys.executable, "-m", "rebel", "train", *args], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)


def _wait_for_epoch(run_dir: Path, epoch: int, proc: subprocess.Popen, timeout: float = 240) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if (run_dir / "metrics.jsonl").is_file() and any(r.get("epoch", -1) >= epoch for r in metrics(run_dir)):
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"epoch {epoch} not reached")


DETERMINISTIC = TINY + ["selfplay.threads=1", "trainer.torch_threads=1", "run.epochs=6", "run.checkpoint_every=1",
                        "run.snapshot_every=2", "evaluation.every=3", "evaluation.final=false",
                        "evaluation.references=false"]


@pytest.mark.parametrize("extra", [[], ["trainer.ema_decay=0.99"],
                                   ["trainer.ema_decay=0.99", "trainer.selfplay_weights=raw"],
                                   ["evaluation.keep_best=true"]],
                         ids=["plain", "weight-average", "raw-selfplay", "keep-best"])
def test_killed_run_resumes_exactly_like_an_uninterrupted_run(tmp_path, extra):
    full = run_cli("train", "quick", *DETERMINISTIC, *extra, f"run.dir={tmp_path}", "run.name=full", "--json",
                   timeout=300)
    assert full.returncode == 0, full.stderr
    reference = epochs_of(metrics(tmp_path / "full"))

    proc = _train_process(["quick", *DETERMINISTIC, *extra, f"run.dir={tmp_path}", "run.name=killed"])
    _wait_for_epoch(tmp_path / "killed", 3, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    state = load_checkpoint(tmp_path / "killed" / "checkpoint.pt")  # never half-written
    assert 1 <= state["epoch"] < 6
    # A kill during a checkpoint write may leave its temporary file; resume removes it.
    (tmp_path / "killed" / ".checkpoint.pt.k9x2ab.tmp").write_bytes(b"half a checkpoint")
    (tmp_path / "killed" / "snapshots" / ".epoch_000004.bin.k9x2ab.tmp").write_bytes(b"half a net")

    resumed = run_cli("train", "--resume", str(tmp_path / "killed"), "--json", timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert not [p for p in (tmp_path / "killed").iterdir() if p.name.endswith(".tmp")]
    after = epochs_of(metrics(tmp_path / "killed"))
    assert sorted(after) == sorted(reference) == list(range(7))
    for epoch in range(7):
        assert after[epoch] == reference[epoch], epoch  # losses, counts, exploitability, errors: exact
    a = (tmp_path / "full" / "weights.bin").read_bytes()
    assert a == (tmp_path / "killed" / "weights.bin").read_bytes()
    # run.snapshot_every=2: the nets of epochs 0, 2, 4, 6, the same in both runs, the last one weights.bin.
    snaps = {run: sorted(p.name for p in (tmp_path / run / "snapshots").iterdir()) for run in ("full", "killed")}
    assert snaps["full"] == snaps["killed"] == [f"epoch_00000{e}.bin" for e in (0, 2, 4, 6)]
    for name in snaps["full"]:
        assert (tmp_path / "full" / "snapshots" / name).read_bytes() == \
            (tmp_path / "killed" / "snapshots" / name).read_bytes(), name
    assert (tmp_path / "full" / "snapshots" / "epoch_000006.bin").read_bytes() == a
    assert (tmp_path / "full" / "snapshots" / "epoch_000000.bin").read_bytes() != a
    if "evaluation.keep_best=true" in extra:  # the chosen net survives the kill: the same in both runs
        assert (tmp_path / "full" / "best.bin").read_bytes() == (tmp_path / "killed" / "best.bin").read_bytes()
        assert json.loads(full.stdout)["best"]["epoch"] == json.loads(resumed.stdout)["best"]["epoch"]


def test_ctrl_c_saves_a_checkpoint_and_the_run_resumes(tmp_path):
    args = ["quick", *TINY, "run.epochs=400", "run.checkpoint_every=1000", "evaluation.every=0",
            "evaluation.final=false", "evaluation.references=false", "evaluation.heldout_steps=0",
            f"run.dir={tmp_path}", "run.name=c"]
    proc = _train_process(args)
    _wait_for_epoch(tmp_path / "c", 2, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "--resume" in err and "Traceback" not in err
    epoch = load_checkpoint(tmp_path / "c" / "checkpoint.pt")["epoch"]
    # The signal may land after epoch 2's metrics row is written and before its snapshot is
    # taken: the checkpoint is then epoch 1's, and resuming truncates the row and redoes it.
    assert epoch >= 1
    r = run_cli("train", "--resume", str(tmp_path / "c"), f"run.epochs={epoch + 1}", "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["epoch"] == epoch + 1


def test_run_budget_training_leaves_the_evaluations_out_of_max_minutes(tmp_path):
    """run.max_minutes limits the wall clock (run.budget=wall) or the wall clock less the
    evaluations (training). The random net's evaluation here (N = 16384, about 7 s since mode (b)
    shares subgame solves between samples) alone outlasts the 1.8 s budget: counted, no epoch is
    trained; left out, training goes on."""
    args = ["quick", *TINY, "selfplay.threads=1", "run.epochs=400", "run.max_minutes=0.03", "evaluation.every=1000",
            "evaluation.final=false", "evaluation.repeats=16384", "evaluation.heldout_steps=64", f"run.dir={tmp_path}"]
    runs = {}
    for budget in ("wall", "training"):
        r = run_cli("train", *args, f"run.budget={budget}", f"run.name={budget}", "--json", timeout=300)
        assert r.returncode == 0, r.stderr
        runs[budget] = json.loads(r.stdout)
    epoch0 = epochs_of(metrics(tmp_path / "training"))[0]
    row0 = next(r for r in metrics(tmp_path / "training") if r.get("epoch") == 0 and r.get("kind") is None)
    first_eval, first_wall = row0["eval_seconds"], row0["wall_seconds"]
    assert first_eval > 1.8 and "exploitability" in epoch0
    assert runs["wall"]["epoch"] == 0
    t = runs["training"]
    assert t["epoch"] >= 1 and t["training_seconds"] >= 1.8
    # The first evaluation is counted out whole (its own timer, not epoch 0's wall clock, which
    # also holds that epoch's self-play: 0.1 s of 9.2 on a loaded machine).
    assert t["evaluation_seconds"] >= first_eval
    assert t["training_seconds"] + t["evaluation_seconds"] == pytest.approx(t["wall_seconds"], rel=1e-9)

    # A checkpoint written before the counter existed: recovered from the metrics on resume.
    path = tmp_path / "training" / "checkpoint.pt"
    state = load_checkpoint(path)
    del state["evaluation_seconds"]
    save_checkpoint(path, state)
    r = run_cli("train", "--resume", str(tmp_path / "training"), f"run.epochs={t['epoch'] + 1}",
                "run.max_minutes=10", "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    resumed = json.loads(r.stdout)
    assert resumed["epoch"] == t["epoch"] + 1
    # (plus the resumed session's reloading of the cached held-out set)
    assert first_wall <= resumed["evaluation_seconds"] < first_wall + 0.5


@pytest.mark.parametrize("override", ["run.budget=cpu", "run.budget=1"])
def test_unknown_run_budget_is_named(override):
    with pytest.raises(ConfigError, match="run.budget must be 'wall' or 'training'"):
        load_train_config(None, [override])


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("args, message", [
    (["quick", "trainer.lrr=1"], "unknown config key 'trainer.lrr'"),
    (["quick", "trainer.batch_size=big"], "trainer.batch_size"),
    (["no_such_config"], "not found"),
    (["quick", "game.num_dice=2", "game.num_faces=6"], "too large for the evaluation"),
    (["--resume", "/nonexistent/run"], "not a directory"),
    ([], "CONFIG"),
])
def test_bad_train_invocations_exit_2_without_traceback(args, message, tmp_path):
    r = run_cli("train", *args, f"run.dir={tmp_path}" if args and not args[0].startswith("--") else "run.epochs=1")
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr and "Traceback" not in r.stderr


def test_resume_refuses_non_runs_corrupt_checkpoints_and_run_changes(tmp_path):
    (tmp_path / "empty").mkdir()
    r = run_cli("train", "--resume", str(tmp_path / "empty"))
    assert r.returncode == 2 and "not a training run" in r.stderr
    ok = run_cli("train", "quick", *TINY, "run.epochs=1", "evaluation.every=0", "evaluation.final=false",
                 "evaluation.references=false", "evaluation.heldout_steps=0", f"run.dir={tmp_path}", "run.name=r",
                 "--json", timeout=300)
    assert ok.returncode == 0, ok.stderr
    again = run_cli("train", "quick", f"run.dir={tmp_path}", "run.name=r")
    assert again.returncode == 2 and "already holds a run" in again.stderr
    change = run_cli("train", "--resume", str(tmp_path / "r"), "trainer.lr=1")
    assert change.returncode == 2 and "run.epochs" in change.stderr
    assert "trainer.device" in change.stderr  # may change: a GPU run resumes on a CPU (tests/nets/test_cuda.py)
    if not torch.cuda.is_available():
        gpu = run_cli("train", "--resume", str(tmp_path / "r"), "run.epochs=2", "trainer.device=cuda")
        assert gpu.returncode == 2 and "sees no CUDA device" in gpu.stderr and "Traceback" not in gpu.stderr
    ckpt = tmp_path / "r" / "checkpoint.pt"
    good = ckpt.read_bytes()
    for corrupt in (good[: len(good) // 2], b"not a checkpoint", good[:100] + bytes(100) + good[200:]):
        ckpt.write_bytes(corrupt)
        r = run_cli("train", "--resume", str(tmp_path / "r"), "run.epochs=2")
        assert r.returncode == 2, r.stderr
        assert "checkpoint" in r.stderr and "Traceback" not in r.stderr
    with pytest.raises(CheckpointError):
        load_checkpoint(ckpt)
