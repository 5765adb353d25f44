"""An AlphaZero training run (what ``rebel train`` runs for an ``algorithm: alphazero``
config): epochs of batched self-play, a replay buffer of (augmented) examples, gradient
steps on it, matches against fixed opponents every few epochs, and the ReBeL trainer's run
directory (config.yaml, metrics.jsonl, TensorBoard, an atomic checkpoint, the net file).

Each epoch is a deterministic function of the configuration and the state before it (its
self-play seed is derived from ``selfplay.seed`` and the epoch), so a run resumed from its
checkpoint continues exactly as an uninterrupted one (torch's CPU kernels permitting).
"""
from __future__ import annotations

import copy
import logging
import time
from typing import Any, Optional

import numpy as np
import torch

from rebel.alphazero.inference import describe, make_evaluator
from rebel.alphazero.match import against_every_reply, play_match
from rebel.alphazero.net import PolicyValueNet, save_net
from rebel.alphazero.players import NetPlayer, make_player
from rebel.alphazero.selfplay import Examples, SelfPlaySettings, augment, self_play
from rebel.alphazero.trainer import AlphaZeroTrainer, TrainerSettings
from rebel.config.alphazero import AlphaZeroConfig
from rebel.nets.torch_device import flush_denormals
from rebel.train.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from rebel.train.rundir import RunDirectory
from rebel.util.progress import Progress

log = logging.getLogger("rebel.train")

NET_FILE = "net.pt"

__all__ = ["AlphaZeroRun", "NET_FILE"]


class _Replay:
    """The last ``capacity`` examples, oldest first.

    Not :class:`rebel.train.replay.ReplayBuffer`, although both keep a first-in-first-out
    window: that ring serves self-play threads that run ahead of a concurrent trainer (locked
    adds, sequence numbers, sampling from a prefix of the stream so that training does not
    depend on thread timing, lookahead slots) and holds flat float32 query rows. Here self-play
    and training alternate within an epoch, the trainer draws from the whole window as three
    arrays (board planes of shape (n, 4, m, n), policies, values), and a checkpoint stores
    those arrays; the ring would add flattening and a checkpoint format change for no new
    behaviour.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.planes: Optional[np.ndarray] = None
        self.policies: Optional[np.ndarray] = None
        self.values: Optional[np.ndarray] = None

    def add(self, ex: Examples) -> None:
        if self.planes is None:
            self.planes, self.policies, self.values = ex.planes, ex.policies, ex.values
        else:
            self.planes = np.concatenate([self.planes, ex.planes])
            self.policies = np.concatenate([self.policies, ex.policies])
            self.values = np.concatenate([self.values, ex.values])
        self.planes = self.planes[-self.capacity:]
        self.policies = self.policies[-self.capacity:]
        self.values = self.values[-self.capacity:]

    def __len__(self) -> int:
        return 0 if self.values is None else len(self.values)

    def state(self) -> dict[str, Any]:
        return {"planes": self.planes, "policies": self.policies, "values": self.values}

    def load(self, state: dict[str, Any]) -> None:
        self.planes, self.policies, self.values = state["planes"], state["policies"], state["values"]


class AlphaZeroRun:
    """Runs (or resumes) the training described by ``config`` in ``run_dir``."""

    def __init__(self, config: AlphaZeroConfig, run_dir: RunDirectory, show_progress: Optional[bool] = None) -> None:
        self.config = config
        self.run_dir = run_dir
        self.progress = config.run.progress and show_progress is not False
        flush_denormals()  # before torch starts its threads, which inherit the setting
        torch.set_num_threads(config.run.threads)
        torch.manual_seed(config.selfplay.seed)
        g, mo = config.game, config.model
        self.net = PolicyValueNet(g.m, g.n, channels=mo.channels, blocks=mo.blocks, value_hidden=mo.value_hidden)
        self.net.eval()
        mc = config.mcts
        # MCTS's leaf evaluator: a native snapshot of the net, renewed after each epoch's training.
        self.evaluator = make_evaluator(self.net, mc.inference, mc.precision, threads=config.run.threads)
        t = config.trainer
        self.trainer = AlphaZeroTrainer(self.net, TrainerSettings(lr=t.lr, weight_decay=t.weight_decay,
                                                                  batch_size=t.batch_size, device=t.device))
        self.replay = _Replay(config.replay.capacity)
        self.epoch = 0
        self.games_played = 0
        self.examples_generated = 0
        self.elapsed_before = 0.0
        self.rng = np.random.default_rng(config.selfplay.seed)

    # ------------------------------------------------------------------ state
    def _state(self, elapsed: float) -> dict[str, Any]:
        """Everything the run needs to continue, detached from the live objects (the replay's
        arrays are replaced, never changed in place, so they are shared, not copied)."""
        return {"algorithm": "alphazero", "epoch": self.epoch, "games_played": self.games_played,
                "examples_generated": self.examples_generated, "elapsed": elapsed,
                "model": {k: v.detach().clone() for k, v in self.net.state_dict().items()},
                "optimizer": self.trainer.optimizer_state(),
                "trainer_steps": self.trainer.steps, "replay": self.replay.state(),
                "rng": copy.deepcopy(self.rng.bit_generator.state), "torch_rng": torch.get_rng_state()}

    def restore(self) -> None:
        """Continues from the run directory's checkpoint (CheckpointError if unusable)."""
        state = load_checkpoint(self.run_dir.file(RunDirectory.CHECKPOINT))
        if state.get("algorithm") != "alphazero":
            raise CheckpointError(f"{self.run_dir.path}: the checkpoint is not an AlphaZero run's")
        try:
            self.trainer.load_state(state["model"], state["optimizer"])
        except (RuntimeError, ValueError, KeyError) as e:
            raise CheckpointError(f"{self.run_dir.path}: the checkpoint does not fit this config's net ({e})") from None
        self.net.eval()
        self.evaluator.update(self.net)
        self.trainer.steps = int(state["trainer_steps"])
        self.replay.load(state["replay"])
        self.epoch = int(state["epoch"])
        self.games_played = int(state["games_played"])
        self.examples_generated = int(state["examples_generated"])
        self.elapsed_before = float(state["elapsed"])
        self.rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        self.run_dir.truncate_metrics(self.epoch)
        log.info("resumed %s at epoch %d (%d games, %.1f min of training so far)", self.run_dir.path, self.epoch,
                 self.games_played, self.elapsed_before / 60)

    def _save(self, state: dict[str, Any]) -> None:
        save_checkpoint(self.run_dir.file(RunDirectory.CHECKPOINT), state)
        net = PolicyValueNet(**self.net.architecture())
        net.load_state_dict(state["model"])
        save_net(net, str(self.run_dir.file(NET_FILE)))

    # ------------------------------------------------------------------ epochs
    def evaluate(self) -> dict[str, Any]:
        """The net (MCTS, no noise, the most visited move) against each opponent."""
        e, g = self.config.evaluation, self.config.game
        out: dict[str, Any] = {}
        for i, spec in enumerate(e.opponents):
            player = NetPlayer(self.net, e.simulations, seed=e.seed, max_games=e.games, evaluator=self.evaluator)
            opponent = make_player(spec, g.m, g.n, g.k, seed=e.seed + 1 + i)
            result = play_match(player, opponent, g.m, g.n, g.k, e.games)
            low, high = result.interval()
            out[f"vs_{spec}"] = {"score": result.score, "interval": [low, high], "wins": result.wins,
                                 "draws": result.draws, "losses": result.losses,
                                 "first": result.as_first, "second": result.as_second}
            log.info("epoch %d against %s: %d wins, %d draws, %d losses, score %.3f [%.3f, %.3f]", self.epoch, spec,
                     result.wins, result.draws, result.losses, result.score, low, high)
        if e.every_reply:
            lines = against_every_reply(NetPlayer(self.net, e.simulations, seed=e.seed, max_games=1 << 16,
                                                  evaluator=self.evaluator), g.m, g.n, g.k)
            out["every_reply"] = lines
            log.info("epoch %d against every reply: lost %d of %d lines moving first, %d of %d moving second",
                     self.epoch, lines["first"]["losses"], lines["first"]["lines"], lines["second"]["losses"],
                     lines["second"]["lines"])
        return out

    def _epoch(self) -> dict[str, Any]:
        cfg = self.config
        g, mc = cfg.game, cfg.mcts
        settings = SelfPlaySettings(g.m, g.n, g.k, games=cfg.selfplay.games, simulations=mc.simulations,
                                    c_puct=mc.c_puct, dirichlet_alpha=mc.dirichlet_alpha,
                                    dirichlet_fraction=mc.dirichlet_fraction, temperature_moves=mc.temperature_moves)
        t0 = time.perf_counter()
        seed = cfg.selfplay.seed * 1_000_003 + self.epoch
        examples, outcomes = self_play(self.evaluator, settings, seed)
        positions = len(examples)
        if cfg.replay.augment:
            examples = augment(examples, g.m, g.n)
        self.replay.add(examples)
        t1 = time.perf_counter()
        planes, policies, values = self.replay.planes, self.replay.policies, self.replay.values
        assert planes is not None and policies is not None and values is not None  # filled just above
        losses = self.trainer.train(planes, policies, values, cfg.trainer.steps_per_epoch, self.rng)
        self.evaluator.update(self.net)  # the trainer left the net in evaluation mode
        t2 = time.perf_counter()
        self.epoch += 1
        self.games_played += cfg.selfplay.games
        self.examples_generated += positions
        return {"epoch": self.epoch, "games_played": self.games_played, "positions": self.examples_generated,
                "replay_size": len(self.replay), **losses, "selfplay_results": outcomes,
                "selfplay_seconds": t1 - t0, "train_seconds": t2 - t1, "inference": describe(self.evaluator)}

    def run(self) -> dict[str, Any]:
        """Trains to ``run.epochs`` (or ``run.max_minutes``); Ctrl-C saves the last finished
        epoch and raises KeyboardInterrupt."""
        cfg = self.config
        start = time.perf_counter()
        elapsed = lambda: self.elapsed_before + time.perf_counter() - start  # noqa: E731
        self.run_dir.open_tensorboard(purge_step=self.epoch)
        last_saved = self.epoch
        # The state after the last epoch whose metrics line is written: what Ctrl-C saves, so
        # that the checkpoint and metrics.jsonl always agree.
        snapshot = self._state(elapsed())
        last: dict[str, Any] = {}
        try:
            with Progress("training", cfg.run.epochs, "epoch", enabled=self.progress, initial=self.epoch) as bar:
                while self.epoch < cfg.run.epochs:
                    if cfg.run.max_minutes is not None and elapsed() >= 60 * cfg.run.max_minutes:
                        log.info("run.max_minutes=%g reached", cfg.run.max_minutes)
                        break
                    record = self._epoch()
                    final = self.epoch == cfg.run.epochs
                    if cfg.evaluation.every and (self.epoch % cfg.evaluation.every == 0 or final):
                        record["evaluation"] = self.evaluate()
                        for opponent, r in record["evaluation"].items():
                            if "score" in r:
                                record[f"score_{opponent}"] = r["score"]  # flat: a TensorBoard scalar
                        if "every_reply" in record["evaluation"]:
                            lines = record["evaluation"]["every_reply"]
                            record["lines_lost"] = lines["first"]["losses"] + lines["second"]["losses"]
                    record["wall_seconds"] = elapsed()
                    self.run_dir.append_metrics(record)
                    snapshot = self._state(elapsed())
                    log.info("epoch %d/%d: policy loss %.4f, value loss %.4f, self-play %s, %.1f min", self.epoch,
                             cfg.run.epochs, record["policy_loss"], record["value_loss"], record["selfplay_results"],
                             record["wall_seconds"] / 60)
                    if self.epoch % cfg.run.checkpoint_every == 0 or final:
                        self._save(snapshot)
                        last_saved = self.epoch
                    last = record
                    bar(self.epoch)
        except KeyboardInterrupt:
            # The epoch in flight is lost; the last recorded one is saved.
            if snapshot["epoch"] > last_saved:
                self._save(snapshot)
            raise
        finally:
            self.run_dir.close()
        if self.epoch > last_saved:
            self._save(self._state(elapsed()))
        summary = {"run_dir": str(self.run_dir.path), "net": str(self.run_dir.file(NET_FILE)), "epoch": self.epoch,
                   "games_played": self.games_played, "positions": self.examples_generated,
                   "wall_seconds": elapsed()}
        if "evaluation" in last:
            summary["evaluation"] = last["evaluation"]
        return summary
