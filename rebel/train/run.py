"""ReBeL training: self-play loops, replay buffer and trainer in lockstep, with evaluation,
checkpoints and resume (what ``rebel train`` runs).

Schedule. Let G = trainer.epoch_examples / trainer.train_ratio (the examples generated per
epoch). Epoch e trains on the first (e + 1) G examples of the stream while the self-play
threads generate the next G with the weights of epoch e - 1; then the threads wait, the new
weights are swapped into their native net, and the run evaluates and checkpoints if due.
So the trainer never uses data more than ``train_ratio`` times faster than it is generated,
generation never stops for long, and with one self-play thread the whole run is a
deterministic function of the configuration (resuming from a checkpoint continues it
exactly). With several threads the order in which their examples enter the buffer depends
on timing, so runs agree only statistically.
"""
from __future__ import annotations

import logging
import math
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Optional

import numpy as np
import torch

from rebel import _core
from rebel.config.train import TrainConfig, game_of, selfplay_iterations, trained_net_metadata
from rebel.games.units import value_unit
from rebel.nets.policy_mlp import PolicyMLP, export_policy_weights, policy_weights_to_bytes, to_native_policy
from rebel.nets.precision import native_kernel
from rebel.nets.torch_device import flush_denormals
from rebel.nets.value_mlp import ValueMLP, export_weights, to_native, weights_to_bytes
from rebel.search.selfplay import GenerationPool, SelfPlayLoop
from rebel.search.solve import solve
from rebel.train.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from rebel.train.evaluation import (
    HeldOutSet,
    check_evaluable,
    evaluation_steps,
    search_exploitability,
    search_exploitability_ray,
)
from rebel.train.policy_trainer import PolicyReplay, PolicyTrainer
from rebel.train.replay import ReplayBuffer
from rebel.train.rundir import RunDirectory
from rebel.train.trainer import Trainer
from rebel.util.atomic_io import atomic_write_bytes
from rebel.util.progress import Progress, progress_callback

if TYPE_CHECKING:  # pragma: no cover
    from rebel.distributed.pool import RayGenerationPool

log = logging.getLogger("rebel.train")

__all__ = ["Training", "TrainingInterrupted", "examples_per_epoch"]


def value_model(config: TrainConfig, game: Any) -> ValueMLP:
    """A freshly initialised value net of the shape ``config.model`` asks for ``game``."""
    m = config.model
    scale = m.value_scale if m.value_scale is not None else value_unit(game)
    return ValueMLP.for_game(game, hidden=m.hidden, layers=m.layers, value_scale=scale,
                             stake_relative=m.stake_relative)


class TrainingInterrupted(Exception):
    """Ctrl-C: the run stopped cleanly after saving a checkpoint."""


def examples_per_epoch(config: TrainConfig) -> int:
    """G: examples generated per epoch (even, as every self-play step adds two)."""
    g = math.ceil(config.trainer.epoch_examples / config.trainer.train_ratio)
    return max(2, g + (g % 2))


def _seed_sequence(seed: int, stream: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, stream])


@dataclass
class Snapshot:
    """Everything a checkpoint holds, captured at an epoch boundary."""

    epoch: int
    generated: int
    trained: int
    elapsed: float
    trainer: dict[str, Any]
    loops: list[dict[str, Any]]
    sampler_rng: dict[str, Any]
    torch_rng: torch.Tensor
    references: dict[str, Any] = field(default_factory=dict)
    last_evaluation: Optional[dict[str, Any]] = None
    evaluation_seconds: float = 0.0  # of elapsed: held-out labelling, references, evaluations
    policy: Optional[dict[str, Any]] = None  # with policy.enabled: its trainer, replay counter and sampler
    best: Optional[dict[str, Any]] = None  # with evaluation.keep_best: the chosen net's record and weights


class Training:
    """One training run in a run directory; :meth:`run` trains until the configured end."""

    def __init__(self, config: TrainConfig, run_dir: RunDirectory, show_progress: Optional[bool] = None) -> None:
        self.config = config
        self.run_dir = run_dir
        self.game = game_of(config)
        e = config.evaluation
        self.evaluates = e.every > 0 or e.final or e.references or e.heldout_steps > 0
        if self.evaluates:
            check_evaluable(self.game)
        # Mode (b)'s progress: sampled policies, or a perfect-information game's search states
        # (evaluated exactly, on this machine's threads whatever evaluation.backend says).
        self.eval_steps = evaluation_steps(self.game, config) if self.evaluates else 0
        self.eval_on_ray = e.backend == "ray" and not self.game.perfect_information
        # Progress reports: bars on a terminal (or when show_progress forces them), lines on
        # stderr every 30 s otherwise; none with run.progress = false or show_progress = False.
        self.progress = config.run.progress and show_progress is not False
        self.terminal = sys.stderr.isatty() if show_progress is None else show_progress
        flush_denormals()  # before torch starts its threads, which inherit the setting
        torch.set_num_threads(config.trainer.torch_threads)
        seed = config.selfplay.seed
        torch.manual_seed(seed)
        self.trainer = Trainer(value_model(config, self.game), config.trainer)
        self.native = to_native(self.trainer.selfplay_model(), self.game, precision=config.search.precision)
        self.kernel = native_kernel(self.native)  # recorded in every metrics row (with ray: the actors')
        log.info("native value net: precision %s, kernel %s", self.kernel["precision"], self.kernel["isa"])
        self.G = examples_per_epoch(config)
        self.policy_trainer: Optional[PolicyTrainer] = None
        self.policy_replay: Optional[PolicyReplay] = None
        self.native_policy: Any = None
        if config.policy.enabled:
            p = config.policy
            policy_model = PolicyMLP.for_game(self.game, hidden=p.hidden, layers=p.layers)
            self.policy_trainer = PolicyTrainer(policy_model, p, self.trainer.device)
            self.native_policy = to_native_policy(policy_model, self.game, precision=config.search.precision)
            # Room for one epoch's D_pi beyond the capacity (bounded by the first subgame's size).
            per_step = p.max_nodes_per_step or int(self.game.count_tree_nodes([], config.search.depth))
            self.policy_replay = PolicyReplay(p.replay_capacity, int(self.game.query_size), int(self.game.num_hands),
                                              int(self.game.num_actions), p.max_nodes_per_step, seed,
                                              lookahead=min(p.replay_capacity, self.G // 2 * per_step))
            self.policy_rng = np.random.Generator(np.random.PCG64(_seed_sequence(seed, 1 << 21)))
        self.buffer = ReplayBuffer(config.replay.capacity, int(self.game.query_size), int(self.game.num_hands),
                                   lookahead=self.G + 2)
        self.pool = self._make_pool(seed)
        self._eval_actors: list[Any] = []  # evaluation.backend=ray with threads self-play
        self.sampler_rng = np.random.Generator(np.random.PCG64(_seed_sequence(seed, 1 << 20)))
        self.generated = 0
        self.trained = 0
        self.elapsed_before = 0.0
        self.evaluation_seconds = 0.0  # wall seconds spent evaluating, over all sessions
        self.references: dict[str, Any] = {}
        self.last_evaluation: Optional[dict[str, Any]] = None
        # evaluation.keep_best: the lowest evaluation so far (its record) and that net's weights
        self.best: Optional[dict[str, Any]] = None
        self.best_weights: Optional[bytes] = None
        self.heldout: Optional[HeldOutSet] = None
        self.snapshot: Optional[Snapshot] = None
        self.checkpointed_epoch = -1

    def _make_pool(self, seed: int) -> "GenerationPool | RayGenerationPool":
        cfg, s = self.config, self.config.search
        iterations = selfplay_iterations(cfg)
        if cfg.selfplay.backend == "ray":
            from rebel.distributed.pool import RayGenerationPool

            num_loops = cfg.ray.workers * cfg.selfplay.threads
            states = [SelfPlayLoop.initial_state(self.game, _seed_sequence(seed, i)) for i in range(num_loops)]
            params = cfg.game.as_dict()
            name = params.pop("name")
            search = {"solver": s.solver, "depth": s.depth, "iterations": iterations, "epsilon": s.epsilon,
                      "iteration_sampling": s.iteration_sampling, "off_path": s.off_path,
                      "initial_pbs_keep": cfg.selfplay.initial_pbs_keep}
            pool = RayGenerationPool(name, params, search, s.precision, states, cfg.ray.workers, cfg.selfplay.threads,
                                     cfg.ray.max_restarts, self.buffer.add, round_examples=self.G)
            pool.install_weights(weights_to_bytes(self.trainer.selfplay_model()))
            return pool
        policy: dict[str, Any] = {}
        if self.policy_replay is not None:  # collect D_pi; warm-start from the policy net being trained
            policy = {"collect_policy": True, "policy_net": self.native_policy if s.warm_start > 0 else None,
                      "warm_iterations": s.warm_start, "warm_prior": s.warm_prior if s.warm_start > 0 else 0.0}
        generator = _core.SelfPlayGenerator(self.game, self.native, solver=s.solver, depth=s.depth,
                                            iterations=iterations, epsilon=s.epsilon,
                                            sampling=s.iteration_sampling, off_path=s.off_path, **policy)
        loops = [SelfPlayLoop(self.game, generator, _seed_sequence(seed, i), cfg.selfplay.initial_pbs_keep)
                 for i in range(cfg.selfplay.threads)]
        return GenerationPool(loops, self.buffer.add, native=self.native,
                              on_step=self.policy_replay.add_step if self.policy_replay is not None else None)

    def _uses_ray(self) -> bool:
        return self.config.selfplay.backend == "ray" or self.config.evaluation.backend == "ray"

    # ------------------------------------------------------------------ state
    def _capture(self, elapsed: float) -> Snapshot:
        return Snapshot(epoch=self.trainer.epoch, generated=self.generated, trained=self.trained, elapsed=elapsed,
                        trainer=self.trainer.state(), loops=self.pool.loop_states(),
                        sampler_rng=dict(self.sampler_rng.bit_generator.state), torch_rng=torch.get_rng_state(),
                        references=dict(self.references), last_evaluation=self.last_evaluation,
                        evaluation_seconds=self.evaluation_seconds, policy=self._policy_capture(),
                        best=self._best_capture())

    def _best_capture(self) -> Optional[dict[str, Any]]:
        if self.best is None or self.best_weights is None:
            return None
        return {"record": dict(self.best), "weights": np.frombuffer(self.best_weights, dtype=np.uint8).copy()}

    def _policy_capture(self) -> Optional[dict[str, Any]]:
        if self.policy_trainer is None or self.policy_replay is None:
            return None
        return {"trainer": self.policy_trainer.state(), "added": self.policy_replay.added,
                "rng": dict(self.policy_rng.bit_generator.state)}

    def _save(self, snap: Snapshot) -> None:
        policy: dict[str, Any] = {}
        if snap.policy is not None and self.policy_replay is not None:
            try:  # (a stop between an epoch's flush and its snapshot saves the epoch before)
                replay = self.policy_replay.ring_state(upto=snap.policy["added"])
            except ValueError as e:
                log.warning("no checkpoint at epoch %d: %s", snap.epoch, e)
                return
            policy = {"policy": {"trainer": snap.policy["trainer"], "rng": snap.policy["rng"], "replay": replay}}
        save_checkpoint(self.run_dir.file(RunDirectory.CHECKPOINT), {
            "epoch": snap.epoch, "generated": snap.generated, "trained": snap.trained, "elapsed": snap.elapsed,
            "trainer": {"model": snap.trainer["model"], "optimizer": snap.trainer["optimizer"],
                        "epoch": snap.trainer["epoch"], "ema": snap.trainer["ema"]},
            "replay": self.buffer.state(upto=snap.generated),
            "loops": snap.loops, "sampler_rng": snap.sampler_rng, "torch_rng": snap.torch_rng,
            "references": snap.references, "last_evaluation": snap.last_evaluation,
            "evaluation_seconds": snap.evaluation_seconds, **policy,
            **({"best": snap.best} if snap.best is not None else {}),
        })
        self.checkpointed_epoch = snap.epoch
        log.info("checkpoint: epoch %d, %d examples generated -> %s", snap.epoch, snap.generated,
                 self.run_dir.file(RunDirectory.CHECKPOINT))

    def restore(self) -> None:
        """Loads the run directory's checkpoint (CheckpointError if unusable)."""
        state = load_checkpoint(self.run_dir.file(RunDirectory.CHECKPOINT))
        try:
            self.trainer.load_state(state["trainer"])
            self.buffer.load_state(state["replay"])
            self.pool.load_loop_states(state["loops"])
            self.sampler_rng.bit_generator.state = state["sampler_rng"]
            torch.set_rng_state(state["torch_rng"])
            self.generated, self.trained = int(state["generated"]), int(state["trained"])
            self.elapsed_before = float(state["elapsed"])
            self.references = dict(state.get("references") or {})
            self.last_evaluation = state.get("last_evaluation")
            if "evaluation_seconds" in state:
                self.evaluation_seconds = float(state["evaluation_seconds"])
            else:  # a checkpoint from before this counter: recovered from the metrics
                self.evaluation_seconds = self._evaluation_seconds_from_metrics(self.trainer.epoch)
            self._restore_policy(state.get("policy"))
            self._restore_best(state.get("best"))
        except (KeyError, ValueError, TypeError, RuntimeError) as e:
            raise CheckpointError(f"{self.run_dir.file(RunDirectory.CHECKPOINT)} does not fit this run: {e}") from None
        if self.generated != (self.trainer.epoch + 1) * self.G \
                and not (self.trainer.epoch == 0 and self.generated == 0):
            raise CheckpointError(f"checkpoint counters do not fit the schedule (epoch {self.trainer.epoch}, "
                                  f"{self.generated} examples generated, {self.G} per epoch)")
        self.pool.install_weights(weights_to_bytes(self.trainer.selfplay_model()))
        if self.policy_trainer is not None:
            self.native_policy.set_weights_bytes(policy_weights_to_bytes(self.policy_trainer.model))
        self.checkpointed_epoch = self.trainer.epoch
        self.run_dir.truncate_metrics(self.trainer.epoch)
        log.info("resumed %s at epoch %d (%d examples generated, %.1f min so far, %.1f of them evaluating)",
                 self.run_dir.path, self.trainer.epoch, self.generated, self.elapsed_before / 60,
                 self.evaluation_seconds / 60)

    def _restore_policy(self, state: Optional[dict[str, Any]]) -> None:
        """The policy net's part of a checkpoint (absent in runs without policy.enabled)."""
        if self.policy_trainer is None or self.policy_replay is None:
            return
        if state is None:
            raise ValueError("policy.enabled=true but the checkpoint holds no policy net "
                             "(it was written with policy.enabled=false)")
        self.policy_trainer.load_state(state["trainer"])
        self.policy_replay.load_state(state["replay"])
        self.policy_rng.bit_generator.state = state["rng"]

    def _restore_best(self, state: Optional[dict[str, Any]]) -> None:
        """The chosen net of evaluation.keep_best; best.bin is written again from the checkpoint, so
        it matches the record even when the run was killed after a newer best.bin was written."""
        if state is None:
            return
        self.best = dict(state["record"])
        self.best_weights = np.asarray(state["weights"], dtype=np.uint8).tobytes()
        if self.config.evaluation.keep_best:
            atomic_write_bytes(self.run_dir.file(RunDirectory.BEST), self.best_weights)

    def _evaluation_seconds_from_metrics(self, epoch: int) -> float:
        """Evaluation time up to ``epoch`` as the metrics record it: everything before epoch 1
        (held-out labelling, references, the random net's evaluation) and each evaluation's
        mode-(b) seconds."""
        rows = [r for r in self.run_dir.read_metrics() if "epoch" in r and r.get("kind") is None]
        seconds = sum(float(r.get("eval_seconds", 0.0)) for r in rows if 0 < r["epoch"] <= epoch)
        first = [r for r in rows if r["epoch"] == 0]
        return seconds + (float(first[0]["wall_seconds"]) if first else 0.0)

    @contextmanager
    def _evaluation_clock(self) -> Iterator[None]:
        """Adds the wall time of the block to ``evaluation_seconds`` (run.budget = training)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.evaluation_seconds += time.perf_counter() - start

    # ------------------------------------------------------------------ evaluation
    def _prepare_evaluation(self) -> None:
        with self._evaluation_clock():
            self._prepare_evaluation_timed()

    def _prepare_evaluation_timed(self) -> None:
        e = self.config.evaluation
        if e.heldout_steps > 0:
            cached = self.run_dir.load_heldout()
            # A run that turns policy.enabled on after its held-out set was written labels it again.
            if cached is not None and (cached[2] is not None or not self.config.policy.enabled):
                self.heldout = HeldOutSet(*cached)
            else:
                start = time.perf_counter()
                log.info("labelling the held-out set: %d self-play steps solved to the end of the game",
                         e.heldout_steps)
                with self._phase("held-out set", e.heldout_steps) as bar:
                    self.heldout = HeldOutSet.generate(self.game, self.config, progress=progress_callback(bar))
                self.run_dir.save_heldout(self.heldout.rows, self.heldout.targets, self.heldout.policy)
                log.info("held-out set: %d PBS rows in %.1f s", len(self.heldout.rows), time.perf_counter() - start)
        if e.references and not self.references:
            self.references = self._references()
            self.run_dir.append_metrics({"kind": "references", **self.references})

    def _references(self) -> dict[str, Any]:
        s = self.config.search
        full_solver = s.solver  # the same algorithm as the search's, without a depth limit
        log.info("references: full-game %s and the zero net's search", full_solver)
        full = solve(self.game, full_solver, s.iterations, off_path=s.off_path, progress=False)
        with self._phase("zero-net search", self.eval_steps) as bar:
            report = progress_callback(bar)
            if self.eval_on_ray:
                zero = search_exploitability_ray(self.game, self.config, None, self._ray_actors(), progress=report)
            else:
                zero = search_exploitability(self.game, _core.ZeroNet(self.game), self.config, progress=report)
        refs = {"full_game_solver": full_solver, "full_game_exploitability": full.exploitability,
                "zero_net_exploitability": zero["exploitability"]}
        log.info("references: full-game %s %.6f, zero net %.6f", full_solver, full.exploitability,
                 zero["exploitability"])
        return refs

    def evaluate(self) -> dict[str, Any]:
        """Held-out error and mode-(b) exploitability of the current weights."""
        with self._evaluation_clock():
            return self._evaluate_timed()

    def _evaluate_timed(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.heldout is not None:
            out.update(self.heldout.error(self.trainer.predict))
            if self.policy_trainer is not None:
                out.update(self.heldout.policy_error(self.policy_trainer.loss_on))
        with self._phase(f"evaluation, epoch {self.trainer.epoch}", self.eval_steps) as bar:
            if self.eval_on_ray:
                result = search_exploitability_ray(self.game, self.config,
                                                   weights_to_bytes(self.trainer.inference_model()),
                                                   self._ray_actors(), progress=progress_callback(bar))
                kernel: dict[str, Any] = {"precision": self.config.evaluation.precision, "isa": None}  # as asked
            else:
                net = to_native(self.trainer.inference_model(), self.game, precision=self.config.evaluation.precision)
                policy_net = None
                if self.policy_trainer is not None and self.config.search.warm_start > 0:
                    policy_net = to_native_policy(self.policy_trainer.model, self.game,
                                                  precision=self.config.evaluation.precision)
                result = search_exploitability(self.game, net, self.config, progress=progress_callback(bar),
                                               policy_net=policy_net)
                kernel = native_kernel(net)
        out.update({"exploitability": result["exploitability"], "br_values": result["br_values"],
                    "eval_seconds": result["seconds"], "eval_precision": kernel["precision"],
                    "eval_isa": kernel["isa"]})
        if result.get("limit"):
            out["eval_limit"] = True  # mode (b) with N -> infinity, exact (perfect information)
        if "exploitability_by_seed" in result:  # evaluation.seeds > 1: the mean above, each seed, the sd
            out["exploitability_by_seed"] = result["exploitability_by_seed"]
            out["exploitability_sd"] = result["exploitability_sd"]
        log.info("evaluation at epoch %d: exploitability %.6f (%s)%s", self.trainer.epoch, result["exploitability"],
                 "N -> infinity, exact" if result.get("limit") else self._protocol_label(result),
                 f", held-out mean max error {out['heldout_delta_mean']:.4f}" if "heldout_delta_mean" in out else "")
        return out

    def _protocol_label(self, result: dict[str, Any]) -> str:
        """How a mode-(b) figure was taken, for the log: N, and the seeds' spread when several."""
        label = f"N = {self.config.evaluation.repeats}"
        if "exploitability_by_seed" in result:
            label += (f", mean of {len(result['exploitability_by_seed'])} seeds, sd {result['exploitability_sd']:.4g}: "
                      + " / ".join(f"{x:.4g}" for x in result["exploitability_by_seed"].values()))
        return label

    def _ray_actors(self) -> list[Any]:
        """The actors evaluating mode (b): the self-play actors, or evaluation's own."""
        actors = getattr(self.pool, "actors", None)
        if actors:
            return actors
        if not self._eval_actors:
            from rebel.distributed.evaluation import start_workers

            cfg = self.config
            params = cfg.game.as_dict()
            name = params.pop("name")
            self._eval_actors = start_workers(name, params, {}, cfg.evaluation.precision, cfg.ray.workers,
                                              cfg.evaluation.threads, cfg.ray.max_restarts)
        return self._eval_actors

    def _connect_ray(self) -> None:
        from rebel.config.train import ray_cpus_needed
        from rebel.distributed.cluster import connect

        cfg = self.config
        connect(cfg.ray.address, cfg.ray.num_cpus, needed_cpus=ray_cpus_needed(cfg))

    def _stop_ray_evaluation(self) -> None:
        if self._eval_actors:
            import ray

            for actor in self._eval_actors:
                ray.kill(actor)
            self._eval_actors = []

    # ------------------------------------------------------------------ main loop
    def run(self) -> dict[str, Any]:
        """Trains until ``run.epochs`` or ``run.max_minutes``; returns the final summary.

        Ctrl-C stops the threads, saves the last epoch boundary and raises TrainingInterrupted.
        """
        cfg = self.config
        session_start = time.perf_counter()
        elapsed = lambda: self.elapsed_before + time.perf_counter() - session_start  # noqa: E731
        # What run.max_minutes limits: all of it, or the wall clock less the evaluations.
        budgeted = elapsed if cfg.run.budget == "wall" else lambda: elapsed() - self.evaluation_seconds  # noqa: E731
        self.run_dir.open_tensorboard(purge_step=self.trainer.epoch + 1 if self.trainer.epoch else None)
        pool = self.pool
        try:
            if self._uses_ray():
                self._connect_ray()
            pool.start(self.generated)
            if self.evaluates:
                self._prepare_evaluation()
            if self.trainer.epoch == 0 and cfg.evaluation.every > 0 and self.last_evaluation is None:
                # The random-init net: the start of the learning curve.
                self.last_evaluation = {"epoch": 0, **self.evaluate()}
                self._consider_best(self.last_evaluation)
                self.run_dir.append_metrics({"epoch": 0, "wall_seconds": elapsed(), "examples_generated": 0,
                                             "examples_trained": 0, **self.last_evaluation})
            if self.trainer.epoch == 0:
                self._keep_snapshot()  # the random-init net: where a snapshot curve starts
            self.snapshot = self._capture(elapsed())
            with Progress("training", cfg.run.epochs, "epoch", enabled=self.progress and self.terminal, terminal=True,
                          after=0.0, initial=self.trainer.epoch, leave=True) as bar:
                bar(self.trainer.epoch)
                while self.trainer.epoch < cfg.run.epochs:
                    if cfg.run.max_minutes is not None and budgeted() >= 60 * cfg.run.max_minutes:
                        log.info("run.max_minutes=%g reached (run.budget=%s)", cfg.run.max_minutes, cfg.run.budget)
                        break
                    record = self._epoch(pool, elapsed)
                    self._report_epoch(bar, record)
            pool.stop(cancel_running=False)
            summary = self._finish(elapsed())
        except KeyboardInterrupt:
            pool.stop(cancel_running=True)
            if self.snapshot is not None and self.snapshot.epoch > self.checkpointed_epoch:
                self._save(self.snapshot)
            if self.checkpointed_epoch < 0:
                raise TrainingInterrupted("stopped before the first checkpoint; start the run again") from None
            raise TrainingInterrupted(f"stopped at epoch {self.checkpointed_epoch}; continue with "
                                      f"`rebel train --resume {self.run_dir.path}`") from None
        finally:
            pool.stop(cancel_running=True)
            if self._uses_ray():
                self._stop_ray_evaluation()
            self.run_dir.close()
        return summary

    def _epoch(self, pool: Any, elapsed: Any) -> dict[str, Any]:
        cfg, G = self.config, self.G
        e = self.trainer.epoch
        stats_before = pool.stats()
        t0 = time.perf_counter()
        pool.allow((e + 2) * G)
        upto = (e + 1) * G
        pool.wait_generated(upto)
        result = self.trainer.train_epoch(lambda n: self.buffer.sample(n, self.sampler_rng, upto=upto))
        t_policy = time.perf_counter()
        policy_record = self._train_policy()
        t_trained = time.perf_counter()
        if self.policy_trainer is not None:  # train_seconds includes it
            policy_record["policy_train_seconds"] = t_trained - t_policy
        pool.wait_idle()
        t_generated = time.perf_counter()
        self.generated = (e + 2) * G
        self.trained += int(result["examples_trained"])
        pool.install_weights(weights_to_bytes(self.trainer.selfplay_model()))
        export_weights(self.trainer.inference_model(), self.run_dir.file(RunDirectory.WEIGHTS),
                       self.net_metadata("value"))
        if self.policy_trainer is not None and self.policy_replay is not None:
            self.policy_replay.flush()  # this epoch's D_pi: trained on from the next epoch
            self.native_policy.set_weights_bytes(policy_weights_to_bytes(self.policy_trainer.model))
            export_policy_weights(self.policy_trainer.model, self.run_dir.file(RunDirectory.POLICY),
                                  self.net_metadata("policy"))
            policy_record["policy_replay_size"] = self.policy_replay.size()
            policy_record["policy_nodes"] = self.policy_replay.added
        self._keep_snapshot()
        stats = pool.stats()
        step_s = stats.step_seconds - stats_before.step_seconds
        loop_s = stats.loop_seconds - stats_before.loop_seconds
        record: dict[str, Any] = {
            "epoch": self.trainer.epoch,
            "wall_seconds": elapsed(),
            "training_seconds": elapsed() - self.evaluation_seconds,  # before this epoch's evaluation
            "examples_generated": self.generated,
            "examples_trained": self.trained,
            "loss": result["loss"],
            "lr": result["lr"],
            "replay_size": self.buffer.size(self.generated),
            "generation_rate": G / max(t_generated - t0, 1e-9),
            "episodes": stats.episodes,
            "train_seconds": t_trained - t0,
            "loop_overhead": (loop_s - step_s) / step_s if step_s > 0 else 0.0,
            "net_precision": self.kernel["precision"],
            "net_isa": self.kernel["isa"],
            **policy_record,
        }
        if self.config.selfplay.backend == "ray":
            record["actor_restarts"] = pool.restarts()
            kernel = getattr(pool, "kernel", None)
            if kernel:
                record["net_precision"], record["net_isa"] = kernel["precision"], kernel["isa"]
        due = cfg.evaluation.every > 0 and self.trainer.epoch % cfg.evaluation.every == 0
        if due:
            self.last_evaluation = {"epoch": self.trainer.epoch, **self.evaluate()}
            record.update({k: v for k, v in self.last_evaluation.items() if k != "epoch"})
            self._consider_best(self.last_evaluation)
            if self.best is not None:
                record["best_epoch"], record["best_exploitability"] = self.best["epoch"], self.best["exploitability"]
        self.run_dir.append_metrics(record)
        self.snapshot = self._capture(elapsed())
        if self.trainer.epoch % cfg.run.checkpoint_every == 0 or self.trainer.epoch >= cfg.run.epochs:
            self._save(self.snapshot)
        return record

    def _consider_best(self, evaluation: dict[str, Any]) -> None:
        """evaluation.keep_best: keeps the net just evaluated as best.bin when its figure is the
        lowest so far (ties keep the earlier net). The rule sees only the in-run figures, so a
        report on other evaluation seeds is not biased by the choice."""
        if not self.config.evaluation.keep_best:
            return
        figure = evaluation.get("exploitability")
        if figure is None or not math.isfinite(figure):
            return
        if self.best is not None and figure >= self.best["exploitability"]:
            return
        self.best = {"epoch": evaluation["epoch"], "exploitability": float(figure)}
        for key in ("exploitability_sd", "exploitability_by_seed"):
            if key in evaluation:
                self.best[key] = evaluation[key]
        self.best_weights = weights_to_bytes(self.trainer.inference_model(), self.net_metadata("value"))
        atomic_write_bytes(self.run_dir.file(RunDirectory.BEST), self.best_weights)
        log.info("best so far: the net of epoch %d (%.6f) -> %s", self.best["epoch"], figure,
                 self.run_dir.file(RunDirectory.BEST))

    def _train_policy(self) -> dict[str, Any]:
        """One epoch of the policy net on the D_pi of the steps done at the last boundary
        (none in the first epoch: its loss is then null)."""
        if self.policy_trainer is None or self.policy_replay is None:
            return {}
        replay = self.policy_replay
        if replay.size() == 0:
            return {"policy_loss": None}
        return self.policy_trainer.train_epoch(lambda n: replay.sample(n, self.policy_rng))

    def _keep_snapshot(self) -> None:
        """With run.snapshot_every, a copy of the net that plays (the weights' average if kept) every
        that many epochs: its curve can be evaluated after the run, in any order or elsewhere."""
        every = self.config.run.snapshot_every
        if every > 0 and self.trainer.epoch % every == 0:
            export_weights(self.trainer.inference_model(), self.run_dir.snapshot_path(self.trainer.epoch),
                           self.net_metadata("value"))

    def net_metadata(self, kind: str) -> dict[str, Any]:
        """What the run's weight files record: its game and search (docs/weights_format.md)."""
        return trained_net_metadata(self.config, kind)

    def _phase(self, desc: str, total: int) -> Progress:
        return Progress(desc, total, enabled=self.progress, terminal=self.terminal)

    def _report_epoch(self, bar: Progress, record: dict[str, Any]) -> None:
        """The epoch's figures: on the bar when one is drawn, one log line otherwise."""
        if bar.shows_bar:
            postfix = {"loss": f"{record['loss']:.4g}", "ex/s": f"{record['generation_rate']:.0f}"}
            if "exploitability" in record:
                postfix["expl"] = f"{record['exploitability']:.4f}"
            bar.set_postfix(postfix)
            bar(record["epoch"])
        else:
            log.info("epoch %d/%d: loss %.5f, %.0f examples/s, %d generated, %.1f min%s", record["epoch"], bar.total,
                     record["loss"], record["generation_rate"], record["examples_generated"],
                     record["wall_seconds"] / 60,
                     f", exploitability {record['exploitability']:.5f}" if "exploitability" in record else "")

    def _finish(self, elapsed: float) -> dict[str, Any]:
        cfg = self.config
        training = elapsed - self.evaluation_seconds  # the final evaluation below is not training
        if cfg.evaluation.final and (self.last_evaluation is None
                                     or self.last_evaluation["epoch"] != self.trainer.epoch):
            self.last_evaluation = {"epoch": self.trainer.epoch, **self.evaluate()}
            self._consider_best(self.last_evaluation)
        if self.snapshot is not None:
            self.snapshot.last_evaluation = self.last_evaluation
            self.snapshot.best = self._best_capture()
            self.snapshot.elapsed = elapsed
        if self.snapshot is not None and (self.snapshot.epoch > self.checkpointed_epoch or cfg.evaluation.final):
            self._save(self.snapshot)
        summary: dict[str, Any] = {"kind": "final", "epoch": self.trainer.epoch, "wall_seconds": elapsed,
                                   "training_seconds": training, "evaluation_seconds": self.evaluation_seconds,
                                   "examples_generated": self.generated, "examples_trained": self.trained,
                                   "run_dir": str(self.run_dir.path),
                                   "weights": str(self.run_dir.file(RunDirectory.WEIGHTS))}
        if self.policy_trainer is not None:
            summary["policy_weights"] = str(self.run_dir.file(RunDirectory.POLICY))
        if self.last_evaluation is not None:
            summary["evaluation"] = self.last_evaluation
        if self.best is not None and cfg.evaluation.keep_best:
            summary["best"] = {**self.best, "weights": str(self.run_dir.file(RunDirectory.BEST))}
        summary["references"] = dict(self.references)
        self.run_dir.append_metrics(summary)
        return summary
