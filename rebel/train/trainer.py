"""The value-net trainer: the original ReBeL's loss, Adam, step learning-rate schedule.

Loss per value x = prediction - target: x^2 for |x| <= 1 and 2|x| - 1 beyond (twice
torch's smooth L1 with beta 1), averaged over hands and over the batch. Adam with the
learning rate halved every ``lr_halving_epochs`` epochs, at most ``lr_max_halvings``
times; gradients clipped to norm ``grad_clip``.

With ``ema_decay`` > 0 the trainer also keeps an exponential moving average of the weights
(updated after every optimizer step) and :meth:`Trainer.inference_model` is that average: the
net self-play, evaluation and the exported weights use. A single net's weights oscillate from
step to step under Adam; their average is a steadier value function.
"""
from __future__ import annotations

import copy
from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from rebel.config.train import TrainerSection
from rebel.nets.torch_device import resolve_device, to_cpu
from rebel.nets.value_mlp import ValueMLP

__all__ = ["value_loss", "Trainer", "state_dict_copy"]


def value_loss(prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean over hands and rows of x^2 (|x| <= 1) or 2|x| - 1 (|x| > 1), x = prediction - target."""
    return 2.0 * F.smooth_l1_loss(prediction, target, beta=1.0)


class Trainer:
    """Owns the torch model and its optimizer; trains one epoch at a time."""

    def __init__(self, model: ValueMLP, settings: TrainerSection) -> None:
        self.settings = settings
        self.device = resolve_device(settings.device)
        self.model = model.to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=settings.lr)
        self.epoch = 0  # epochs completed
        self.ema: ValueMLP | None = copy.deepcopy(self.model).eval() if settings.ema_decay > 0 else None
        if self.ema is not None:
            self.ema.requires_grad_(False)

    def inference_model(self) -> ValueMLP:
        """The net to play and evaluate with: the weights' moving average if enabled, else the model."""
        return self.ema if self.ema is not None else self.model

    def selfplay_model(self) -> ValueMLP:
        """The net self-play generates with: the inference model, or the trained weights themselves
        under ``selfplay_weights="raw"``."""
        return self.model if self.settings.selfplay_weights == "raw" else self.inference_model()

    @torch.no_grad()
    def _update_ema(self) -> None:
        assert self.ema is not None
        for avg, p in zip(self.ema.parameters(), self.model.parameters()):
            avg.lerp_(p, 1.0 - self.settings.ema_decay)

    def lr_at(self, epoch: int) -> float:
        """Learning rate of epoch ``epoch`` (0-based)."""
        s = self.settings
        return s.lr * 0.5 ** min(s.lr_max_halvings, epoch // s.lr_halving_epochs)

    def train_epoch(self, sample: Callable[[int], tuple[np.ndarray, np.ndarray]]) -> dict[str, float]:
        """One epoch: ``epoch_examples / batch_size`` batches, each from ``sample(batch_size)``."""
        s = self.settings
        lr = self.lr_at(self.epoch)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.model.train()
        losses = []
        batches = max(1, s.epoch_examples // s.batch_size)
        for _ in range(batches):
            rows, targets = sample(s.batch_size)
            x = torch.from_numpy(rows).to(self.device)
            y = torch.from_numpy(targets).to(self.device)
            prediction = self.model(x)
            scale = self.model.value_scale
            # The loss in the net's unit, so smooth L1's bend sits at one unit for every game.
            loss = value_loss(prediction, y) if scale == 1.0 else value_loss(prediction / scale, y / scale)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), s.grad_clip)
            self.optimizer.step()
            if self.ema is not None:
                self._update_ema()
            losses.append(loss.detach())
        self.epoch += 1
        return {"loss": float(torch.stack(losses).mean().item()), "lr": lr, "examples_trained": batches * s.batch_size}

    @torch.no_grad()
    def predict(self, rows: np.ndarray) -> np.ndarray:
        """The inference model's values for query rows (float32 numpy in and out)."""
        model = self.inference_model()
        model.eval()
        return model(torch.from_numpy(np.ascontiguousarray(rows, dtype=np.float32)).to(self.device)).cpu().numpy()

    def state(self) -> dict[str, Any]:
        """Model, moving average (None when off) and optimizer state (deep copies on the CPU),
        and the epoch counter."""
        model = state_dict_copy(self.model)
        optimizer = to_cpu(copy.deepcopy(self.optimizer.state_dict()))
        ema = state_dict_copy(self.ema) if self.ema is not None else None
        return {"model": model, "optimizer": optimizer, "epoch": self.epoch, "ema": ema}

    def load_state(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.epoch = int(state["epoch"])
        if self.ema is not None:
            ema = state.get("ema")
            if ema is None:
                raise ValueError("trainer.ema_decay > 0 but the checkpoint holds no moving average "
                                 "(it was written with trainer.ema_decay=0)")
            self.ema.load_state_dict(ema)


def state_dict_copy(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A copy of ``model``'s parameters and buffers on the CPU."""
    return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
