"""``rebel train`` for AlphaZero configs (``algorithm: alphazero``): the schema, defaults and
checks. The run directory, metrics, checkpoints and resume are the ReBeL trainer's."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence

from omegaconf import DictConfig, OmegaConf

from rebel.config import common as shared
from rebel.config.common import ConfigError

ALGORITHM = "alphazero"

__all__ = ["ALGORITHM", "AlphaZeroConfig", "is_alphazero_yaml", "load_alphazero_config", "from_yaml_text",
           "to_yaml"]


@dataclass
class AzGameSection:
    name: str = "mnk"
    m: int = 3                        # rows
    n: int = 3                        # columns
    k: int = 3                        # stones in a row to win


@dataclass
class AzModelSection:
    channels: int = 32                # 3x3 convolution channels of the residual trunk
    blocks: int = 2                   # residual blocks
    value_hidden: int = 64            # hidden units of the value head


@dataclass
class AzMctsSection:
    simulations: int = 50             # per move, in self-play
    c_puct: float = 1.5
    dirichlet_alpha: float = 0.3      # root noise in self-play
    dirichlet_fraction: float = 0.25
    temperature_moves: int = 4        # moves drawn from the visit counts; the most visited after
    inference: str = "native"         # what evaluates the net's leaves: native (C++ core) or torch
    precision: str = "auto"           # native: fp32, bf16 (bf16 products, float32 sums) or auto


@dataclass
class AzSelfPlaySection:
    games: int = 64                   # games per epoch, played side by side (the net's batch)
    seed: int = 0


@dataclass
class AzReplaySection:
    capacity: int = 40000             # examples (after the symmetry augmentation)
    augment: bool = True              # every example under each board symmetry


@dataclass
class AzTrainerSection:
    lr: float = 2.0e-3
    weight_decay: float = 1.0e-4      # L2 regularisation
    batch_size: int = 256
    steps_per_epoch: int = 100
    device: str = "cpu"               # where the gradient steps run: cpu, or cuda (self-play stays on the CPU)


@dataclass
class AzRunSection:
    epochs: int = 20
    max_minutes: Optional[float] = None  # stop (cleanly) after this much wall time
    checkpoint_every: int = 1
    dir: str = "runs"
    name: Optional[str] = None
    progress: bool = True
    threads: int = 1                  # torch threads for the net


@dataclass
class AzEvaluationSection:
    every: int = 5                    # epochs between evaluations (0: never; the final epoch always)
    games: int = 20                   # per opponent, colours alternating
    opponents: List[str] = field(default_factory=lambda: ["perfect"])  # mcts:N, perfect, random
    simulations: int = 50             # the net player's simulations per move
    seed: int = 0
    every_reply: bool = False         # also play every possible opponent line, both colours (small boards)


@dataclass
class AlphaZeroConfig:
    algorithm: str = ALGORITHM
    game: AzGameSection = field(default_factory=AzGameSection)
    model: AzModelSection = field(default_factory=AzModelSection)
    mcts: AzMctsSection = field(default_factory=AzMctsSection)
    selfplay: AzSelfPlaySection = field(default_factory=AzSelfPlaySection)
    replay: AzReplaySection = field(default_factory=AzReplaySection)
    trainer: AzTrainerSection = field(default_factory=AzTrainerSection)
    run: AzRunSection = field(default_factory=AzRunSection)
    evaluation: AzEvaluationSection = field(default_factory=AzEvaluationSection)


def is_alphazero_yaml(text: str) -> bool:
    """Whether a YAML configuration asks for AlphaZero (``algorithm: alphazero``)."""
    try:
        data = OmegaConf.create(text)
    except Exception:
        return False
    return isinstance(data, DictConfig) and data.get("algorithm") == ALGORITHM


def check(config: AlphaZeroConfig) -> None:
    """ConfigError naming the first impossible value."""
    from rebel import _core
    from rebel.alphazero.players import make_player

    if config.algorithm != ALGORITHM:
        raise ConfigError(f"algorithm must be {ALGORITHM!r} here, got {config.algorithm!r}")
    g = config.game
    if g.name != "mnk":
        raise ConfigError(f"game.name: AlphaZero runs on m,n,k games (mnk), got {g.name!r}")
    try:
        _core.MnkBoard(g.m, g.n, g.k)
    except ValueError as e:
        raise ConfigError(f"game: {e}") from None
    positive = [("model.channels", config.model.channels), ("model.value_hidden", config.model.value_hidden),
                ("mcts.simulations", config.mcts.simulations), ("selfplay.games", config.selfplay.games),
                ("replay.capacity", config.replay.capacity), ("trainer.batch_size", config.trainer.batch_size),
                ("trainer.steps_per_epoch", config.trainer.steps_per_epoch), ("run.epochs", config.run.epochs),
                ("run.checkpoint_every", config.run.checkpoint_every), ("run.threads", config.run.threads),
                ("evaluation.games", config.evaluation.games),
                ("evaluation.simulations", config.evaluation.simulations)]
    for key, value in positive:
        if value < 1:
            raise ConfigError(f"{key} must be >= 1, got {value}")
    non_negative = [("model.blocks", config.model.blocks), ("mcts.temperature_moves", config.mcts.temperature_moves),
                    ("evaluation.every", config.evaluation.every),
                    ("trainer.weight_decay", config.trainer.weight_decay)]
    for key, amount in non_negative:  # ints and a float (weight_decay)
        if amount < 0:
            raise ConfigError(f"{key} must be >= 0, got {amount}")
    device = config.trainer.device
    if not (device in ("cpu", "cuda") or (device.startswith("cuda:") and device[5:].isdigit())):
        raise ConfigError(f"trainer.device must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")
    if not config.trainer.lr > 0:
        raise ConfigError(f"trainer.lr must be > 0, got {config.trainer.lr}")
    if not (config.mcts.c_puct > 0 and config.mcts.dirichlet_alpha > 0 and 0 <= config.mcts.dirichlet_fraction <= 1):
        raise ConfigError("mcts: c_puct and dirichlet_alpha must be > 0, dirichlet_fraction in [0, 1]")
    if config.mcts.inference not in ("native", "torch"):
        raise ConfigError(f"mcts.inference must be 'native' or 'torch', got {config.mcts.inference!r}")
    if config.mcts.precision not in ("auto", "fp32", "bf16"):
        raise ConfigError(f"mcts.precision must be auto, fp32 or bf16, got {config.mcts.precision!r}")
    if config.mcts.inference == "native" and config.mcts.precision == "bf16" and not _core.mlp_supported_bf16_isas():
        raise ConfigError("mcts.precision=bf16: this CPU has no bf16 kernel (AMX-BF16 or AVX512_BF16); "
                          "use auto or fp32")
    if config.run.max_minutes is not None and not config.run.max_minutes > 0:
        raise ConfigError(f"run.max_minutes must be > 0, got {config.run.max_minutes}")
    for spec in config.evaluation.opponents:
        try:
            make_player(spec, g.m, g.n, g.k)
        except ValueError as e:
            raise ConfigError(f"evaluation.opponents: {e}") from None


def load_alphazero_config(config_file: Optional[str] = None, overrides: Sequence[str] = ()) -> AlphaZeroConfig:
    """Defaults < ``config_file`` < ``overrides``, checked."""
    config = shared.load_config(AlphaZeroConfig, config_file, overrides, example="trainer.lr=1e-3")
    check(config)
    return config


def to_yaml(config: AlphaZeroConfig) -> str:
    return shared.to_yaml(config)


def from_yaml_text(text: str, overrides: Sequence[str] = ()) -> AlphaZeroConfig:
    """A configuration saved by :func:`to_yaml`, with ``overrides``, checked."""
    config = shared.from_yaml_text(AlphaZeroConfig, text, overrides, "run.epochs=40")
    check(config)
    return config
