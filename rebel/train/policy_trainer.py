"""The policy net's half of a training run: its replay buffer of D_pi nodes and its trainer.

D_pi (the paper's Algorithm 1): every self-play step with ``collect_policy`` returns, for
each node of the solved subgame where a player acts, a query row (row[1] = the acting
player), the subgame's average policy per hand of the actor (``[H, A]``, 0 on illegal
actions), the legal actions and the actor's normalised beliefs (the loss weights per hand).

:class:`PolicyReplay` keeps the nodes in a :class:`rebel.train.replay.ReplayBuffer` (the
target, legality and weights packed into one float32 target row). Self-play threads add to
a pending list; :meth:`PolicyReplay.flush` moves it into the ring at an epoch boundary,
when the loops are idle, so the trainer samples from a fixed prefix and a one-thread run is
a deterministic function of its seed. :class:`PolicyTrainer` owns the torch policy net and
its Adam optimizer and trains an epoch at a time on :func:`rebel.nets.policy_mlp.policy_loss`.
"""
from __future__ import annotations

import copy
import threading
import zlib
from typing import Any, Callable

import numpy as np
import torch

from rebel.config.train import PolicySection
from rebel.nets.policy_mlp import PolicyMLP, policy_loss
from rebel.nets.torch_device import to_cpu
from rebel.train.replay import ReplayBuffer
from rebel.train.trainer import state_dict_copy

__all__ = ["PolicyBatch", "PolicyReplay", "PolicyTrainer"]

#: (rows [n, q], targets [n, H, A], legal [n, A] bool, weights [n, H])
PolicyBatch = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class PolicyReplay:
    """D_pi nodes: a pending list filled by the self-play threads and a ring the trainer samples.

    Args:
        capacity: nodes kept in the ring (first in first out).
        query_size, num_hands, num_actions: the game's sizes.
        max_nodes_per_step: > 0 keeps at most this many nodes of each step, drawn uniformly
            with a generator seeded by ``seed`` and the step's own data (so the choice does
            not depend on the threads' order); 0 keeps all.
        lookahead: ring slots beyond the capacity, so that the state at the previous epoch
            boundary can still be written after a flush (a stop in between; see :meth:`ring_state`).
    """

    def __init__(self, capacity: int, query_size: int, num_hands: int, num_actions: int,
                 max_nodes_per_step: int = 0, seed: int = 0, lookahead: int = 0) -> None:
        self.H, self.A = int(num_hands), int(num_actions)
        self.buffer = ReplayBuffer(capacity, query_size, self.H * self.A + self.A + self.H, lookahead=lookahead)
        self.max_nodes_per_step = int(max_nodes_per_step)
        self.seed = int(seed)
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []
        self._lock = threading.Lock()

    @property
    def added(self) -> int:
        """Nodes moved into the ring so far (the prefix the trainer samples from)."""
        return self.buffer.added

    def size(self) -> int:
        return self.buffer.size()

    def add_step(self, step: Any) -> None:
        """Queues a self-play step's D_pi (``policy_rows``, ``policy_targets``, ``policy_legal``,
        ``policy_weights``); thread-safe."""
        rows = np.asarray(step.policy_rows, dtype=np.float32)
        n = rows.shape[0]
        if n == 0:
            return
        packed = np.concatenate([
            np.asarray(step.policy_targets, dtype=np.float32).reshape(n, self.H * self.A),
            np.asarray(step.policy_legal, dtype=np.float32).reshape(n, self.A),
            np.asarray(step.policy_weights, dtype=np.float32).reshape(n, self.H)], axis=1)
        if 0 < self.max_nodes_per_step < n:
            rng = np.random.default_rng([self.seed, zlib.crc32(rows.tobytes())])
            keep = np.sort(rng.choice(n, size=self.max_nodes_per_step, replace=False))
            rows, packed = rows[keep], packed[keep]
        with self._lock:
            self._pending.append((rows, packed))

    def flush(self) -> int:
        """Moves the pending nodes into the ring (call when no step is running); returns how many."""
        with self._lock:
            pending, self._pending = self._pending, []
        total = 0
        for rows, packed in pending:
            self.buffer.add(rows, packed)
            total += rows.shape[0]
        return total

    def discard_pending(self) -> None:
        """Drops the nodes of steps after the last boundary (a resumed run generates them again)."""
        with self._lock:
            self._pending = []

    def sample(self, count: int, rng: np.random.Generator) -> PolicyBatch:
        """``count`` nodes drawn uniformly (with replacement) from the ring."""
        rows, packed = self.buffer.sample(count, rng)
        return self.unpack(rows, packed)

    def unpack(self, rows: np.ndarray, packed: np.ndarray) -> PolicyBatch:
        n, HA = rows.shape[0], self.H * self.A
        targets = packed[:, :HA].reshape(n, self.H, self.A)
        legal = packed[:, HA:HA + self.A] > 0.5
        weights = packed[:, HA + self.A:]
        return rows, targets, legal, weights

    def state(self) -> dict[str, Any]:
        """The ring's nodes and counter (the pending list must be empty: flush first)."""
        with self._lock:
            if self._pending:
                raise RuntimeError("PolicyReplay.state() with nodes pending; flush() at the epoch boundary first")
        return self.buffer.state()

    def ring_state(self, upto: int | None = None) -> dict[str, Any]:
        """The ring's nodes among the first ``upto`` flushed (default: all) and that counter,
        leaving out the pending ones (their steps are generated again on resume). ValueError if
        later flushes have overwritten some of them already."""
        upto = self.buffer.added if upto is None else upto
        oldest = upto - self.buffer.size(upto)
        if self.buffer.added - oldest > self.buffer.slots:
            raise ValueError(f"the policy replay buffer has moved on by {self.buffer.added - upto} nodes since "
                             f"node {upto}, overwriting some of the nodes before it")
        return self.buffer.state(upto)

    def load_state(self, state: dict[str, Any]) -> None:
        self.discard_pending()
        self.buffer.load_state(state)


class PolicyTrainer:
    """Owns the torch policy net and its Adam optimizer; trains one epoch at a time."""

    def __init__(self, model: PolicyMLP, settings: PolicySection, device: torch.device) -> None:
        self.settings = settings
        self.device = device
        self.model = model.to(device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=settings.lr)
        self.epochs = 0  # epochs that trained (an epoch with an empty buffer does not count)

    def train_epoch(self, sample: Callable[[int], PolicyBatch]) -> dict[str, float]:
        """``epoch_examples / batch_size`` batches, each from ``sample(batch_size)``."""
        s = self.settings
        self.model.train()
        losses = []
        batches = max(1, s.epoch_examples // s.batch_size)
        for _ in range(batches):
            rows, targets, legal, weights = (torch.from_numpy(np.ascontiguousarray(a)).to(self.device)
                                             for a in sample(s.batch_size))
            loss = policy_loss(self.model(rows), targets, legal, weights)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), s.grad_clip)
            self.optimizer.step()
            losses.append(loss.detach())
        self.epochs += 1
        return {"policy_loss": float(torch.stack(losses).mean().item()),
                "policy_examples_trained": batches * s.batch_size}

    @torch.no_grad()
    def loss_on(self, batch: PolicyBatch) -> float:
        """The loss of the current net on ``batch`` (e.g. a held-out D_pi)."""
        self.model.eval()
        rows, targets, legal, weights = (torch.from_numpy(np.ascontiguousarray(a)).to(self.device) for a in batch)
        return float(policy_loss(self.model(rows), targets, legal, weights).item())

    def state(self) -> dict[str, Any]:
        """Model and optimizer state (copies on the CPU) and the epoch counter."""
        return {"model": state_dict_copy(self.model), "optimizer": to_cpu(copy.deepcopy(self.optimizer.state_dict())),
                "epochs": self.epochs}

    def load_state(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.epochs = int(state["epochs"])
