"""AlphaZero on an m,n,k game, end to end: train a shipped config (resumable), then play the
final net against fixed opponents over many games, and draw the learning curve.

    python experiments/alphazero_mnk.py alphazero_6x6k4                     # 100 games against mcts:1000
    python experiments/alphazero_mnk.py alphazero_8x8k5 --opponents mcts:1000,mcts:5000

The run lives in experiments/results/mnk/CONFIG (``--out``): ``rebel train CONFIG`` starts it,
or resumes it from its checkpoint after a kill (Ctrl-C, a session's end); a run that reached
its run.max_minutes or run.epochs is finished and is not trained again. A results folder
without a checkpoint but with the net (what is committed) counts as finished too. Then:

* final_match.json: the final net (MCTS with ``--simulations`` per move, no noise, the most
  visited move) against each opponent over ``--games`` games, colours alternating, with a
  95% interval; cached per (opponent, games, simulations) unless ``--rematch``;
* summary.json: training minutes, epochs, games and positions, the leaf evaluator that ran,
  each opponent's final score against ``--target``, and the first of the run's own
  (smaller) evaluations at or above the target;
* curve.png: the run's evaluation scores against wall minutes and against self-play games.

``--quick`` runs the pipeline on a tiny tic-tac-toe run (seconds; a test runs it).
"""
from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

log = logging.getLogger("experiments.alphazero_mnk")

ROOT = Path(__file__).resolve().parent.parent
NET_FILE = "net.pt"
QUICK_OVERRIDES = ["run.epochs=2", "selfplay.games=8", "mcts.simulations=8", "trainer.steps_per_epoch=5",
                   "trainer.batch_size=32", "evaluation.every=1", "evaluation.games=4", "evaluation.simulations=8",
                   "evaluation.every_reply=false", "evaluation.opponents=[random]", "model.channels=8",
                   "model.blocks=1"]


class Refused(Exception):
    """A problem with the arguments or the results folder (exit 2, one line)."""


def shown(path: Path) -> str:
    """The path relative to the repository when it lies inside it (so a committed summary
    names no machine's folders), else absolute."""
    path = path.resolve()
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def read_metrics(run_dir: Path) -> List[Dict[str, Any]]:
    path = run_dir / "metrics.jsonl"
    if not path.is_file():
        return []
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            raise Refused(f"{path}:{number}: not a JSON line (a corrupt run?)") from None
    return rows


def train(config: str, run_dir: Path, overrides: List[str], progress: bool) -> None:
    """Starts or resumes the run; returns at once for a finished one."""
    cmd = [sys.executable, "-m", "rebel", "train"] + ([] if progress else ["--no-progress"])
    if (run_dir / "checkpoint.pt").is_file():
        cmd += ["--resume", str(run_dir)]
    elif (run_dir / NET_FILE).is_file() and read_metrics(run_dir):
        log.info("%s: a finished run (net and metrics, no checkpoint): not trained again", run_dir)
        return
    else:
        if run_dir.exists() and any(run_dir.iterdir()):
            raise Refused(f"{run_dir} holds files but no run (no checkpoint, no net): remove it or pass another --out")
        cmd += [config, *overrides, f"run.dir={run_dir.parent}", f"run.name={run_dir.name}"]
    log.info("training: %s", " ".join(cmd[3:]))
    subprocess.run(cmd, check=True)


def run_config(run_dir: Path) -> Any:
    from rebel.config.alphazero import load_alphazero_config

    return load_alphazero_config(str(run_dir / "config.yaml"))


def check_opponents(config: str, run_dir: Path, overrides: List[str], opponents: List[str]) -> None:
    """Refused for a config that is not AlphaZero's or an opponent that cannot play its board,
    before any training."""
    from rebel.alphazero.players import make_player
    from rebel.cli.common import UsageError
    from rebel.cli.train import _config_path
    from rebel.config.alphazero import is_alphazero_yaml, load_alphazero_config
    from rebel.config.common import ConfigError

    try:
        if (run_dir / "config.yaml").is_file():
            cfg = run_config(run_dir)
        else:
            path = _config_path(config)
            if not is_alphazero_yaml(Path(path).read_text()):
                raise Refused(f"{config}: not an AlphaZero config (algorithm: alphazero)")
            cfg = load_alphazero_config(path, overrides)
    except (UsageError, ConfigError) as e:
        raise Refused(str(e)) from None
    for spec in opponents:
        try:
            make_player(spec, cfg.game.m, cfg.game.n, cfg.game.k)
        except ValueError as e:
            raise Refused(f"--opponents: {e}") from None


def final_match(run_dir: Path, opponents: List[str], games: int, simulations: int, rematch: bool) -> Dict[str, Any]:
    """The final net against each opponent (cached in final_match.json)."""
    from rebel.alphazero.inference import describe, make_evaluator
    from rebel.alphazero.match import play_match
    from rebel.alphazero.net import load_net
    from rebel.alphazero.players import NetPlayer, make_player

    path = run_dir / "final_match.json"
    cached: Dict[str, Any] = json.loads(path.read_text()) if path.is_file() and not rematch else {}
    cfg = run_config(run_dir)
    g = cfg.game
    net = load_net(str(run_dir / NET_FILE))
    for i, spec in enumerate(opponents):
        key = f"{spec} games={games} simulations={simulations}"
        if key in cached:
            continue
        evaluator = make_evaluator(net, cfg.mcts.inference, cfg.mcts.precision, threads=cfg.run.threads)
        player = NetPlayer(net, simulations, c_puct=cfg.mcts.c_puct, seed=0, max_games=games, evaluator=evaluator)
        opponent = make_player(spec, g.m, g.n, g.k, seed=1 + i)
        start = time.perf_counter()
        result = play_match(player, opponent, g.m, g.n, g.k, games)
        cached[key] = {**result.as_dict(), "opponent": spec, "simulations": simulations,
                       "inference": describe(evaluator), "seconds": time.perf_counter() - start}
        log.info("final net against %s: %d wins, %d draws, %d losses, score %.3f", spec, result.wins, result.draws,
                 result.losses, result.score)
        path.write_text(json.dumps(cached, indent=2) + "\n")
    return cached


def summary(run_dir: Path, matches: Dict[str, Any], opponents: List[str], games: int, simulations: int,
            target: float) -> Dict[str, Any]:
    rows = read_metrics(run_dir)
    epochs = [r for r in rows if "epoch" in r and "policy_loss" in r]
    if not epochs:
        raise Refused(f"{run_dir}: no finished epoch in metrics.jsonl")
    last = epochs[-1]
    cfg = run_config(run_dir)
    out: Dict[str, Any] = {
        "run_dir": shown(run_dir), "game": {"m": cfg.game.m, "n": cfg.game.n, "k": cfg.game.k},
        "training": {"wall_minutes": last["wall_seconds"] / 60, "epochs": last["epoch"],
                     "games": last["games_played"], "positions": last["positions"],
                     "selfplay_minutes": sum(r["selfplay_seconds"] for r in epochs) / 60,
                     "train_minutes": sum(r["train_seconds"] for r in epochs) / 60,
                     "inference": sorted({r.get("inference", "torch") for r in epochs})},
        "target": target, "final": {}, "first_at_target_during_training": {}}
    for spec in opponents:
        match = matches[f"{spec} games={games} simulations={simulations}"]
        low, high = match["score_interval_95"]
        out["final"][spec] = {"score": match["score"], "interval_95": [low, high], "wins": match["wins"],
                              "draws": match["draws"], "losses": match["losses"], "games": match["games"],
                              "simulations": simulations, "meets_target": match["score"] >= target}
        first = next((r for r in epochs if r.get(f"score_vs_{spec}", -1.0) >= target), None)
        out["first_at_target_during_training"][spec] = None if first is None else {
            "epoch": first["epoch"], "wall_minutes": first["wall_seconds"] / 60, "games": first["games_played"],
            "score": first[f"score_vs_{spec}"], "evaluation_games": first["evaluation"][f"vs_{spec}"]["wins"]
            + first["evaluation"][f"vs_{spec}"]["draws"] + first["evaluation"][f"vs_{spec}"]["losses"]}
    return out


def plot_curve(run_dir: Path, result: Dict[str, Any], path: Path) -> bool:
    """Evaluation scores against wall minutes and self-play games, with the final matches."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.warning("matplotlib is not installed: no figure")
        return False
    rows = [r for r in read_metrics(run_dir) if "evaluation" in r]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    training = result["training"]
    for i, spec in enumerate(result["final"]):
        points = [r for r in rows if f"vs_{spec}" in r["evaluation"]]
        color = f"C{i}"
        for ax, x, end in ((axes[0], lambda r: r["wall_seconds"] / 60, training["wall_minutes"]),
                           (axes[1], lambda r: r["games_played"], training["games"])):
            if points:
                lows = [r["score_vs_" + spec] - r["evaluation"][f"vs_{spec}"]["interval"][0] for r in points]
                highs = [r["evaluation"][f"vs_{spec}"]["interval"][1] - r["score_vs_" + spec] for r in points]
                ax.errorbar([x(r) for r in points], [r["score_vs_" + spec] for r in points], yerr=[lows, highs],
                            fmt="o-", color=color, capsize=2, markersize=3, label=f"against {spec} (during training)")
            final = result["final"][spec]
            ax.errorbar([end], [final["score"]], yerr=[[final["score"] - final["interval_95"][0]],
                                                       [final["interval_95"][1] - final["score"]]],
                        fmt="s", color=color, markersize=7, capsize=3,
                        label=f"final net against {spec}, {final['games']} games")
    for ax in axes:
        ax.axhline(result["target"], color="black", linestyle=":", linewidth=1, label=f"target {result['target']}")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(True, alpha=0.3)
    axes[0].set_xlabel("wall minutes of training (2 cores, evaluations included)")
    axes[1].set_xlabel("self-play games")
    axes[0].set_ylabel("score (win 1, draw 1/2), 95% interval")
    axes[1].legend(fontsize=7, loc="lower right")
    g = result["game"]
    fig.suptitle(f"AlphaZero on {g['m']}x{g['n']} k{g['k']}: the net (MCTS) against fixed opponents")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("config", nargs="?", help="an AlphaZero config (e.g. alphazero_6x6k4) or a YAML path")
    parser.add_argument("--out", help="the run / results folder (default experiments/results/mnk/CONFIG)")
    parser.add_argument("--opponents", default="mcts:1000", help="comma-separated players (default mcts:1000)")
    parser.add_argument("--games", type=int, default=100, help="games per opponent in the final match (default 100)")
    parser.add_argument("--simulations", type=int, default=400,
                        help="the net's MCTS simulations per move (default 400)")
    parser.add_argument("--target", type=float, default=0.9, help="the score asked for (default 0.9)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="config overrides for a new run (repeatable)")
    parser.add_argument("--rematch", action="store_true", help="replay the final matches even if cached")
    parser.add_argument("--quick", action="store_true", help="a tiny tic-tac-toe run (seconds)")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.quick:
            config = args.config or "alphazero_tictactoe"
            overrides = QUICK_OVERRIDES + args.set
            if args.opponents == "mcts:1000":
                args.opponents = "random"
            if args.games == 100:
                args.games = 4
            if args.simulations == 400:
                args.simulations = 8
        elif not args.config:
            raise Refused("name a config (e.g. alphazero_6x6k4), or pass --quick")
        else:
            config, overrides = args.config, args.set
        if args.games < 1 or args.simulations < 1:
            raise Refused("--games and --simulations must be >= 1")
        opponents = [s.strip() for s in args.opponents.split(",") if s.strip()]
        if not opponents:
            raise Refused("--opponents: name at least one player")
        name = Path(config).stem
        run_dir = (Path(args.out) if args.out
                   else ROOT / "experiments" / "results" / "mnk" / (name + ("-quick" if args.quick else "")))
        check_opponents(config, run_dir, overrides, opponents)
        train(config, run_dir, overrides, progress=not args.no_progress)
        matches = final_match(run_dir, opponents, args.games, args.simulations, args.rematch)
        result = summary(run_dir, matches, opponents, args.games, args.simulations, args.target)
        result["figure"] = shown(run_dir / "curve.png") if plot_curve(run_dir, result, run_dir / "curve.png") else None
        result["command"] = ("python experiments/alphazero_mnk.py "
                             + " ".join(argv if argv is not None else sys.argv[1:]))
        (run_dir / "summary.json").write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(result, indent=2))
        return 0
    except Refused as e:
        print(f"alphazero_mnk.py: {e}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as e:
        print(f"alphazero_mnk.py: training failed (exit {e.returncode})", file=sys.stderr)
        return 2 if e.returncode == 2 else 1


if __name__ == "__main__":
    sys.exit(main())
