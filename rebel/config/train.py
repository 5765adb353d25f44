"""Configuration of ``rebel train``: typed sections merged by :mod:`rebel.config`.

Precedence: the defaults below < a YAML file (``configs/*.yaml``) < dotted ``key=value``
overrides. Unknown keys and wrong types are refused by omegaconf (reported with the valid
keys); :func:`check` then checks the ranges and choices the types cannot express.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Optional

from rebel.config import common as shared
from rebel.config.common import ConfigError, GameSection
from rebel.games import Game
from rebel.nets.precision import DEFAULT_PRECISION, EVAL_PRECISION, PRECISIONS, check_precision
from rebel.search.settings import MAX_WARM_START, check_warm_prior, check_warm_start
from rebel.search.solve import OFF_PATH_MODES, SEARCH_SOLVERS

__all__ = ["ConfigError", "TrainConfig", "load_train_config", "valid_keys", "game_of", "to_yaml", "from_yaml_text",
           "ray_cpus_needed", "trained_net_metadata"]



@dataclass
class SearchSection:
    solver: str = "lcfr"             # lcfr = linear CFR-D (the paper's), lfp = linear FP, flop, cfr-avg, ...
    depth: int = 2                   # actions per subgame
    iterations: int = 1024           # half-iterations T per subgame
    epsilon: float = 0.25            # exploration at the exploring player's nodes
    iteration_sampling: str = "linear"  # linear (paper's Algorithm 1) or uniform (original code)
    off_path: str = "skip"           # nodes the iterate never reaches: skip, floor (original's), conditional
    precision: str = DEFAULT_PRECISION  # the native net's arithmetic in self-play: fp32, bf16, int16 or auto
    warm_start: int = 0              # K > 0: every subgame (self-play, evaluation) starts from the policy net's
    #                                  policy as if K updates had played it (the paper: 15); needs policy.enabled
    warm_prior: float = 0.0          # CFR solvers with warm_start > 0: the regret prior toward the policy net's
    #                                  policy (csrc/solvers/warm_start.cc); 0: none


BACKENDS = ("threads", "ray")
SELFPLAY_WEIGHTS = ("average", "raw")  # trainer.selfplay_weights


@dataclass
class SelfPlaySection:
    threads: int = 2                 # self-play loops, each in its own thread (with ray: per actor)
    seed: int = 0                    # seeds every generator of the run
    backend: str = "threads"         # threads (this process) or ray (actors; see the ray section, docs/distributed.md)
    iterations: Optional[int] = None  # self-play's solver iterations T per subgame (null: search.iterations;
                                      # the evaluations and references always use search.iterations)
    initial_pbs_keep: float = 1.0    # the fraction of episodes whose initial-PBS examples enter the replay
    #                                  (rebel.search.selfplay: that PBS repeats every episode and no search
    #                                  queries it); the step is solved either way


@dataclass
class RaySection:
    address: str = ""                # "": start a local Ray; "auto": join this machine's cluster; "host:port", "ray://host:port"
    num_cpus: Optional[int] = None   # CPUs of a local Ray (default: this machine's)
    workers: int = 1                 # actors (self-play: selfplay.threads loops each; evaluation: evaluation.threads)
    max_restarts: int = 3            # times Ray restarts a dead actor (its unfinished work is redone exactly)


@dataclass
class ReplaySection:
    capacity: int = 2_000_000        # examples kept, first in first out


@dataclass
class ModelSection:
    hidden: int = 256
    layers: int = 2
    # The unit of the net's outputs (ValueMLP.value_scale); null: the game's own
    # (rebel.games.units.value_unit: the ante in no-limit Leduc, 1 in every other game).
    value_scale: Optional[float] = None
    # Outputs relative to the stake (ValueMLP.stake_column): the head predicts values per unit
    # of the pot per player, which the net multiplies back in; games with a stake feature only
    # (the poker games, Game.stake_feature).
    stake_relative: bool = False


@dataclass
class TrainerSection:
    lr: float = 3e-4
    lr_halving_epochs: int = 400     # the learning rate halves every this many epochs ...
    lr_max_halvings: int = 2         # ... at most this many times
    batch_size: int = 512
    epoch_examples: int = 25_600     # examples sampled from the replay buffer per epoch
    grad_clip: float = 5.0
    train_ratio: float = 4.0         # examples trained per example generated, at most
    device: str = "cpu"              # cpu, or cuda (only when asked and present)
    torch_threads: int = 1           # intra-op threads of the trainer (the rest generate)
    ema_decay: float = 0.0           # > 0: evaluation and weights.bin use this moving average of the weights ...
    selfplay_weights: str = "average"  # ... and self-play too ("average"), or the trained weights themselves ("raw")


@dataclass
class PolicySection:
    """Algorithm 1's policy net, trained beside the value net (off by default).

    Self-play then also collects D_pi: at every node of each solved subgame where a player
    acts, the subgame's average policy per hand of that player, weighted by its beliefs.
    The policy net trains one epoch behind the value net on the D_pi of the steps finished
    at the last epoch boundary (so epoch 1 has none yet), with its own replay buffer, Adam
    and loss (:func:`rebel.nets.policy_mlp.policy_loss`); its weights go to the self-play
    loops every epoch and to the run folder as ``policy.bin``.
    """

    enabled: bool = False
    hidden: int = 256
    layers: int = 2
    lr: float = 3e-4
    batch_size: int = 512
    epoch_examples: int = 25_600     # D_pi nodes sampled from the policy replay buffer per epoch
    grad_clip: float = 5.0
    replay_capacity: int = 2_000_000  # D_pi nodes kept, first in first out
    max_nodes_per_step: int = 0      # > 0: keep at most this many D_pi nodes of each self-play step
    #                                  (drawn uniformly, reproducibly); 0: all of them


@dataclass
class RunSection:
    epochs: int = 1000
    max_minutes: Optional[float] = None  # stop (cleanly) after this much time (see budget)
    # What max_minutes counts: "wall" (everything since the run began) or "training" (the wall
    # clock less the evaluations: held-out labelling, references and mode (b) during training).
    budget: str = "wall"
    checkpoint_every: int = 10       # epochs between checkpoints (and at a clean stop)
    snapshot_every: int = 0          # > 0: keep the net every this many epochs (snapshots/epoch_NNNNNN.bin)
    dir: str = "runs"
    name: Optional[str] = None       # default: <config name>-<date>-<time>
    progress: bool = True            # progress bar on a terminal (log lines otherwise)


@dataclass
class EvaluationSection:
    every: int = 10                  # epochs between evaluations (0: never)
    repeats: int = 1024              # N sampled policies of mode (b)
    threads: int = 2
    seed: int = 0
    seeds: int = 1                   # evaluation seeds seed, seed + 1, ...: the record holds their mean, each
    #                                  seed's figure and the sample sd (3: the paper protocol's figure in-run)
    heldout_steps: int = 256         # oracle-labelled self-play steps of the held-out set
    heldout_seed: int = 12345
    final: bool = True               # evaluate once more at the end of the run
    keep_best: bool = False          # keep the evaluated net with the lowest mode-(b) figure as best.bin: a
    #                                  selection rule fixed before the run (report the net on other seeds)
    references: bool = True          # zero net and full-game solver, once per run
    backend: str = "threads"         # threads, or ray: mode (b)'s sampled policies split across the ray
    #                                  section's actors
    precision: str = EVAL_PRECISION  # the net's arithmetic in mode (b) (fp32: the number does not depend on the CPU)


@dataclass
class TrainConfig:
    game: GameSection = field(default_factory=GameSection)
    search: SearchSection = field(default_factory=SearchSection)
    selfplay: SelfPlaySection = field(default_factory=SelfPlaySection)
    replay: ReplaySection = field(default_factory=ReplaySection)
    model: ModelSection = field(default_factory=ModelSection)
    trainer: TrainerSection = field(default_factory=TrainerSection)
    run: RunSection = field(default_factory=RunSection)
    evaluation: EvaluationSection = field(default_factory=EvaluationSection)
    ray: RaySection = field(default_factory=RaySection)
    policy: PolicySection = field(default_factory=PolicySection)


def valid_keys() -> list[str]:
    """Every dotted key of :class:`TrainConfig`, e.g. ``trainer.lr``."""
    return shared.valid_keys(TrainConfig)


def trained_net_metadata(config: TrainConfig, kind: str = "value") -> dict[str, Any]:
    """What a run's weight files record (docs/weights_format.md, version 3): the game and the
    search the net is trained for; self-play's subgames end after a public deal."""
    from rebel.nets.weights_io import net_metadata

    s = config.search
    return net_metadata(kind, config.game.as_dict(), {"solver": s.solver, "depth": s.depth,
                                                      "iterations": s.iterations, "chance_leaves": "after_deal"})


def load_train_config(config_file: Optional[str] = None, overrides: Sequence[str] = ()) -> TrainConfig:
    """Resolves the defaults < ``config_file`` < ``overrides`` (``section.key=value``)."""
    config = shared.load_config(TrainConfig, config_file, overrides, example="trainer.lr=1e-3")
    check(config)
    return config


def game_of(config: TrainConfig) -> Game:
    """The game of ``config`` (ConfigError if it does not exist or has bad parameters)."""
    return config.game.make()


def ray_cpus_needed(config: TrainConfig) -> int:
    """CPUs the run's Ray actors reserve (0 without Ray): ray.workers actors of selfplay.threads
    CPUs (evaluation.threads when only the evaluation runs on Ray)."""
    if config.selfplay.backend == "ray":
        return config.ray.workers * config.selfplay.threads
    if config.evaluation.backend == "ray":
        return config.ray.workers * config.evaluation.threads
    return 0


def selfplay_iterations(config: TrainConfig) -> int:
    """The solver iterations T of each self-play subgame: selfplay.iterations, or
    search.iterations where it is null (test-time search and evaluation use search.iterations)."""
    it = config.selfplay.iterations
    return config.search.iterations if it is None else it


def check(config: TrainConfig) -> None:
    """Ranges and choices that the types alone do not express (ConfigError)."""
    game_of(config)
    s, t, r, e = config.search, config.trainer, config.run, config.evaluation
    rules: list[tuple[bool, str]] = [
        (s.solver in SEARCH_SOLVERS, f"search.solver must be one of {', '.join(SEARCH_SOLVERS)}, got {s.solver!r}"),
        (s.depth >= 1, f"search.depth must be >= 1, got {s.depth}"),
        (2 <= s.iterations < 2**31, f"search.iterations must be in [2, 2**31), got {s.iterations}"),
        (0.0 <= s.epsilon <= 1.0, f"search.epsilon must lie in [0, 1], got {s.epsilon}"),
        (s.iteration_sampling in ("linear", "uniform"),
         f"search.iteration_sampling must be 'linear' or 'uniform', got {s.iteration_sampling!r}"),
        (s.off_path in OFF_PATH_MODES,
         f"search.off_path must be one of {', '.join(OFF_PATH_MODES)}, got {s.off_path!r}"),
        (not s.solver.startswith("cfr-avg") or s.off_path == "skip",
         f"search.solver {s.solver} supports search.off_path 'skip' only, got {s.off_path!r}"),
        # Measured (tests/search/test_solver_variants.py): Kuhn, depth 2, exact leaves, T = 4096,
        # player 1's averaged root value -0.46 against the game's +0.056.
        (s.solver not in ("cfr-avg", "cfr-avg-play-avg"),
         f"search.solver {s.solver} cannot train a value net: cfr-avg's averaged root values are not PBS values "
         "(its leaf-value differences enter them weighted by the player's own iterates); use "
         "cfr-avg-modified or lcfr (cfr-avg stays available to rebel eval)"),
        (s.precision in PRECISIONS, f"search.precision must be one of {', '.join(PRECISIONS)}, got {s.precision!r}"),
        (1 <= config.selfplay.threads <= 256, f"selfplay.threads must be in [1, 256], got {config.selfplay.threads}"),
        (config.selfplay.seed >= 0, f"selfplay.seed must be >= 0, got {config.selfplay.seed}"),
        (config.selfplay.iterations is None or 2 <= config.selfplay.iterations < 2**31,
         f"selfplay.iterations must be in [2, 2**31) or null, got {config.selfplay.iterations}"),
        (config.selfplay.backend in BACKENDS,
         f"selfplay.backend must be one of {', '.join(BACKENDS)}, got {config.selfplay.backend!r}"),
        (0.0 <= config.selfplay.initial_pbs_keep <= 1.0,
         f"selfplay.initial_pbs_keep must lie in [0, 1], got {config.selfplay.initial_pbs_keep}"),
        (e.precision in PRECISIONS,
         f"evaluation.precision must be one of {', '.join(PRECISIONS)}, got {e.precision!r}"),
        (e.backend in BACKENDS, f"evaluation.backend must be one of {', '.join(BACKENDS)}, got {e.backend!r}"),
        (1 <= config.ray.workers <= 4096, f"ray.workers must be in [1, 4096], got {config.ray.workers}"),
        (config.ray.num_cpus is None or config.ray.num_cpus >= 1,
         f"ray.num_cpus must be >= 1 or null, got {config.ray.num_cpus}"),
        (config.ray.max_restarts >= 0, f"ray.max_restarts must be >= 0, got {config.ray.max_restarts}"),
        (config.replay.capacity >= 2, f"replay.capacity must be >= 2, got {config.replay.capacity}"),
        (config.model.hidden >= 1 and config.model.layers >= 0,
         f"model.hidden must be >= 1 and model.layers >= 0, got {config.model.hidden}, {config.model.layers}"),
        (config.model.value_scale is None or (math.isfinite(config.model.value_scale) and config.model.value_scale > 0),
         f"model.value_scale must be > 0 or null, got {config.model.value_scale}"),
        (not config.model.stake_relative or game_of(config).stake_feature is not None,
         f"model.stake_relative: {game_of(config).description()} has no stake feature "
         "(only the poker games have one)"),
        (math.isfinite(t.lr) and t.lr > 0, f"trainer.lr must be > 0, got {t.lr}"),
        (t.lr_halving_epochs >= 1 and t.lr_max_halvings >= 0, "trainer.lr_halving_epochs must be >= 1 and "
         "trainer.lr_max_halvings >= 0"),
        (t.batch_size >= 1, f"trainer.batch_size must be >= 1, got {t.batch_size}"),
        (t.epoch_examples >= t.batch_size, f"trainer.epoch_examples ({t.epoch_examples}) must be >= "
         f"trainer.batch_size ({t.batch_size})"),
        (math.isfinite(t.grad_clip) and t.grad_clip > 0, f"trainer.grad_clip must be > 0, got {t.grad_clip}"),
        (math.isfinite(t.train_ratio) and t.train_ratio > 0, f"trainer.train_ratio must be > 0, got {t.train_ratio}"),
        (0.0 <= t.ema_decay < 1.0, f"trainer.ema_decay must lie in [0, 1), got {t.ema_decay}"),
        (t.selfplay_weights in SELFPLAY_WEIGHTS,
         f"trainer.selfplay_weights must be one of {', '.join(SELFPLAY_WEIGHTS)}, got {t.selfplay_weights!r}"),
        (t.device in ("cpu", "cuda") or t.device.startswith("cuda:"),
         f"trainer.device must be 'cpu' or 'cuda', got {t.device!r}"),
        (t.torch_threads >= 1, f"trainer.torch_threads must be >= 1, got {t.torch_threads}"),
        (r.epochs >= 1, f"run.epochs must be >= 1, got {r.epochs}"),
        (r.max_minutes is None or (math.isfinite(r.max_minutes) and r.max_minutes > 0),
         f"run.max_minutes must be > 0 or null, got {r.max_minutes}"),
        (r.budget in ("wall", "training"), f"run.budget must be 'wall' or 'training', got {r.budget!r}"),
        (r.checkpoint_every >= 1, f"run.checkpoint_every must be >= 1, got {r.checkpoint_every}"),
        (r.snapshot_every >= 0, f"run.snapshot_every must be >= 0, got {r.snapshot_every}"),
        (r.name is None or (bool(r.name) and "/" not in r.name and r.name not in (".", "..")),
         f"run.name must be a plain folder name, got {r.name!r}"),
        (e.every >= 0, f"evaluation.every must be >= 0, got {e.every}"),
        (e.repeats >= 1 and e.threads >= 1, "evaluation.repeats and evaluation.threads must be >= 1"),
        (e.seeds >= 1, f"evaluation.seeds must be >= 1, got {e.seeds}"),
        (not e.keep_best or e.every > 0 or e.final,
         "evaluation.keep_best needs evaluations to choose from: evaluation.every > 0 or evaluation.final"),
        (e.threads <= 256, f"evaluation.threads must be <= 256, got {e.threads}"),
        (e.seed >= 0 and e.heldout_seed >= 0, "evaluation seeds must be >= 0"),
        (e.heldout_steps >= 0, f"evaluation.heldout_steps must be >= 0, got {e.heldout_steps}"),
    ]
    for ok, message in _int_limits(config) + rules + _policy_rules(config):
        if not ok:
            raise ConfigError(message)
    try:
        check_warm_start(s.solver, s.off_path, s.warm_start, "search.warm_start")
        check_warm_prior(s.solver, s.warm_start, s.warm_prior)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    for key, precision in (("search.precision", s.precision), ("evaluation.precision", e.precision)):
        try:
            check_precision(precision)
        except ValueError as error:
            raise ConfigError(f"{key}: {error}") from None
    if config.selfplay.initial_pbs_keep == 0.0:
        _check_episodes_leave_initial_pbs(config)


def _check_episodes_leave_initial_pbs(config: TrainConfig) -> None:
    """With selfplay.initial_pbs_keep = 0 some episode must reach a second PBS, or self-play
    would record nothing and the run would wait forever: the subgame at the initial PBS
    (built as self-play builds it) must have a leaf where a later search starts."""
    from rebel import _core

    game = game_of(config)
    tree = _core.build_tree(game, [], config.search.depth, chance_leaves=True)
    if len(tree.pseudo_leaves) == 0:
        raise ConfigError(
            f"selfplay.initial_pbs_keep=0 would drop every example: with search.depth={config.search.depth} the "
            f"subgame at the initial PBS of {game.description()} reaches the end of every episode; "
            "use a smaller search.depth or initial_pbs_keep > 0")


def _policy_rules(config: TrainConfig) -> list[tuple[bool, str]]:
    """The policy section's ranges, and what a warm start or a policy net needs."""
    p, s = config.policy, config.search
    return [
        (0 <= s.warm_start <= MAX_WARM_START,
         f"search.warm_start must be in [0, {MAX_WARM_START}], got {s.warm_start}"),
        (p.hidden >= 1 and p.layers >= 0,
         f"policy.hidden must be >= 1 and policy.layers >= 0, got {p.hidden}, {p.layers}"),
        (math.isfinite(p.lr) and p.lr > 0, f"policy.lr must be > 0, got {p.lr}"),
        (p.batch_size >= 1, f"policy.batch_size must be >= 1, got {p.batch_size}"),
        (p.epoch_examples >= p.batch_size,
         f"policy.epoch_examples ({p.epoch_examples}) must be >= policy.batch_size ({p.batch_size})"),
        (math.isfinite(p.grad_clip) and p.grad_clip > 0, f"policy.grad_clip must be > 0, got {p.grad_clip}"),
        (p.replay_capacity >= 1, f"policy.replay_capacity must be >= 1, got {p.replay_capacity}"),
        (p.max_nodes_per_step >= 0, f"policy.max_nodes_per_step must be >= 0, got {p.max_nodes_per_step}"),
        (s.warm_start == 0 or p.enabled,
         f"search.warm_start={s.warm_start} warm-starts from the policy net being trained: set policy.enabled=true"),
        (not p.enabled or config.selfplay.backend != "ray",
         "policy.enabled=true is not supported with selfplay.backend=ray (the actors collect no D_pi); "
         "use selfplay.backend=threads"),
        (s.warm_start == 0 or config.evaluation.backend != "ray",
         "search.warm_start > 0 is not supported with evaluation.backend=ray (the actors build the search "
         "without the policy net); use evaluation.backend=threads"),
        (s.warm_start == 0 or not game_of(config).perfect_information,
         "search.warm_start > 0: the exact evaluation of perfect-information games has no policy-net warm start"),
    ]


def _int_limits(config: TrainConfig) -> list[tuple[bool, str]]:
    """Every integer fits the C++ core: seeds below 2**64, everything else at most 2**31 - 1."""
    rules: list[tuple[bool, str]] = []
    for section in fields(config):
        values = getattr(config, section.name)
        for f in fields(values):
            value = getattr(values, f.name)
            if isinstance(value, bool) or not isinstance(value, int):
                continue
            high = 2**64 - 1 if f.name.endswith("seed") else 2**31 - 1
            rules.append((value <= high, f"{section.name}.{f.name} must be <= {high}, got {value}"))
    return rules


def to_yaml(config: TrainConfig) -> str:
    """The resolved configuration as YAML text."""
    return shared.to_yaml(config)


def from_yaml_text(text: str, overrides: Sequence[str] = ()) -> TrainConfig:
    """Parses a configuration saved by :func:`to_yaml`, then applies ``overrides`` (checked
    like any other configuration)."""
    config = shared.from_yaml_text(TrainConfig, text, overrides, "run.epochs=2000")
    check(config)
    return config
