"""The Ray backend (optional extra): distributed mode (b) equal to the local one, self-play
actors in the threads backend's lockstep, a killed actor's work redone exactly, one
object-store put per weight swap, a multi-raylet cluster, and bad input named in one line.

The C++ pieces the distributed evaluation is built on are tested without Ray."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import rebel
from rebel import _core
from rebel.distributed.evaluation import sample_ranges
from tests.conftest import REPO_ROOT, liars_dice, run_cli

try:
    import ray  # noqa: F401

    HAVE_RAY = True
except ImportError:
    HAVE_RAY = False

needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="Ray is not installed (pip install '.[ray]' or "
                                                    "bash scripts/install.sh --ray)")

# A tiny deterministic 1x3f run (as in test_train.py), on Ray: two actors with one loop each.
TINY = ["game.num_dice=1", "game.num_faces=3", "search.iterations=128", "replay.capacity=20000",
        "trainer.epoch_examples=2560", "trainer.batch_size=256", "trainer.lr=1e-3",
        "evaluation.repeats=64", "evaluation.heldout_steps=128", "evaluation.threads=1"]
ON_RAY = ["selfplay.backend=ray", "ray.workers=2", "selfplay.threads=1", "ray.num_cpus=2", "trainer.torch_threads=1"]
RUN_KEYS_NOT_COMPARED = {"wall_seconds", "training_seconds", "generation_rate", "train_seconds", "loop_overhead",
                         "eval_seconds", "actor_restarts"}


def _epochs(run_dir: Path) -> dict[int, dict]:
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return {r["epoch"]: {k: v for k, v in r.items() if k not in RUN_KEYS_NOT_COMPARED}
            for r in rows if "epoch" in r and r.get("kind") is None}


# ------------------------------------------------------------------------- without Ray
def test_sample_ranges_cover_the_samples_and_cut_at_every_power_of_two():
    for n, pieces in [(1, 1), (1, 8), (5, 2), (16, 3), (1000, 8), (1024, 64)]:
        ranges = sample_ranges(n, pieces)
        assert ranges[0][0] == 0 and ranges[-1][1] == n
        assert all(a < b for a, b in ranges) and all(ranges[i][1] == ranges[i + 1][0] for i in range(len(ranges) - 1))
        ends = {b for _, b in ranges}
        assert {1 << i for i in range(n.bit_length()) if (1 << i) <= n} <= ends
        assert max(b - a for a, b in ranges) <= max(1, -(-n // pieces))
    with pytest.raises(ValueError):
        sample_ranges(0, 4)


def test_range_sums_reproduce_the_sampled_evaluation():
    """Summing consecutive ranges of samples (any split, any thread count) and evaluating the
    sum gives evaluate_sampled's numbers: what the distributed evaluation relies on."""
    game = liars_dice(1, 3)
    tree = rebel.build_tree(game)
    search = _core.TestTimeSearch(game, _core.OracleNet(game, "lcfr", 64, "root_mean"), "lcfr", 2, 64)
    ref = search.evaluate_sampled(32, threads=2, seed=7)
    total = None
    checked = 0
    for begin, end in sample_ranges(32, 5):
        part = search.sampled_sum(begin, end, threads=1 + (begin % 2), seed=7)
        total = part if total is None else total + part
        if end in ref["num_policies"]:
            report = _core.evaluate_mixture_sum(game, tree, total)
            i = ref["num_policies"].index(end)
            assert report["exploitability"] == pytest.approx(ref["exploitability"][i], abs=1e-12)
            assert report["br_values"] == pytest.approx(ref["br_values"][i], abs=1e-12)
            checked += 1
    assert checked == len(ref["num_policies"])
    assert np.abs(report["average_policy"] - ref["average_policy"]).max() < 1e-12
    with pytest.raises(ValueError):
        search.sampled_sum(3, 2)
    with pytest.raises(ValueError, match="sum"):
        _core.evaluate_mixture_sum(game, tree, np.zeros((3, 3)))


def test_ray_missing_is_one_line_and_exit_2(tmp_path):
    """With Ray absent (hidden here), backend=ray is refused before anything is created."""
    code = textwrap.dedent(f"""
        import sys
        sys.modules["ray"] = None  # as if not installed
        from rebel.cli import main
        sys.exit(main(["train", "quick", "selfplay.backend=ray", "run.dir={tmp_path}", "run.name=x"]))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)))
    assert r.returncode == 2, r.stderr
    assert "Ray is not installed" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("override, message", [
    ("ray.workers=0", "ray.workers must be in [1, 4096]"),
    ("selfplay.backend=dask", "selfplay.backend must be one of threads, ray"),
    ("evaluation.backend=mpi", "evaluation.backend must be one of threads, ray"),
    ("ray.max_restarts=-1", "ray.max_restarts must be >= 0"),
])
def test_ray_config_mistakes_are_named(override, message, tmp_path):
    r = run_cli("train", "quick", override, f"run.dir={tmp_path}", "run.name=x")
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "x").exists()


# ----------------------------------------------------------------------------- with Ray
@needs_ray
@pytest.mark.parametrize("args, message", [
    (["ray.address=127.0.0.1:1"], "unreachable"),
    (["ray.address=no-port"], "ray.address must be"),
    (["ray.workers=3", "ray.num_cpus=2"], "the Ray cluster has 2 CPUs, the actors need 3"),
])
def test_unusable_ray_clusters_exit_2_within_30_seconds(args, message, tmp_path):
    start = time.monotonic()
    r = run_cli("train", "quick", "selfplay.backend=ray", "selfplay.threads=1", *args, f"run.dir={tmp_path}",
                "run.name=x", timeout=60)
    assert time.monotonic() - start < 30
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "x").exists()


@pytest.fixture(scope="module")
def local_ray():
    from rebel.distributed.cluster import connect, disconnect

    connect("", num_cpus=2, needed_cpus=2)
    yield
    disconnect()


def _train_in_process(run_dir: Path, overrides: list[str], during=None):
    from rebel.config.train import load_train_config, to_yaml
    from rebel.train.run import Training
    from rebel.train.rundir import RunDirectory

    config = load_train_config(str(REPO_ROOT / "configs" / "quick.yaml"), overrides)
    training = Training(config, RunDirectory.create(run_dir, to_yaml(config)), show_progress=False)
    watcher = None
    if during is not None:
        watcher = threading.Thread(target=during, args=(training,), daemon=True)
        watcher.start()
    summary = training.run()
    if watcher is not None:
        watcher.join(timeout=60)
    return training, summary


DETERMINISTIC = TINY + ON_RAY + ["run.epochs=5", "run.checkpoint_every=1", "evaluation.every=0",
                                 "evaluation.final=false", "evaluation.references=false", "evaluation.heldout_steps=0"]


@needs_ray
def test_killed_actor_is_restarted_and_the_run_is_unchanged(local_ray, tmp_path):
    """Two actors with one loop each make a deterministic run; killing one actor's process
    mid-run changes nothing but the restart counter: every epoch's examples, losses and the
    final weights are those of the uninterrupted run. One object-store put per weight swap."""
    import ray

    full, summary = _train_in_process(tmp_path / "full", DETERMINISTIC)
    assert summary["examples_generated"] == 6 * 640
    assert full.pool.weight_puts == 1 + 5  # the initial weights, then one per epoch

    killed_at: list[int] = []

    def kill_one_actor(training) -> None:
        deadline = time.time() + 120
        while time.time() < deadline:
            pool = training.pool
            if pool.actors and pool.generated() >= 2 * 640:
                pid = pool.actor_info[0]["pid"]
                os.kill(pid, signal.SIGKILL)
                killed_at.append(pool.generated())
                return
            time.sleep(0.01)

    killed, _ = _train_in_process(tmp_path / "killed", DETERMINISTIC, during=kill_one_actor)
    assert killed_at, "the actor was not killed"
    rows = [json.loads(line) for line in (tmp_path / "killed" / "metrics.jsonl").read_text().splitlines()]
    assert max(r.get("actor_restarts", 0) for r in rows) >= 1
    assert _epochs(tmp_path / "killed") == _epochs(tmp_path / "full")
    for e, row in _epochs(tmp_path / "killed").items():
        if e:
            assert row["examples_generated"] == (e + 1) * 640
    assert (tmp_path / "full" / "weights.bin").read_bytes() == (tmp_path / "killed" / "weights.bin").read_bytes()
    assert ray.is_initialized()


@needs_ray
def test_ray_evaluation_equals_the_local_one(local_ray, tmp_path):
    """Mode (b) split across actors: the same exploitability at every N to 1e-12 (a random
    MLP, whose leaf values exercise the net path, and the oracle)."""
    import torch

    from rebel.distributed.evaluation import evaluate
    from rebel.nets.value_mlp import ValueMLP, export_weights
    from rebel.search.settings import EvalSettings, RaySettings

    game = liars_dice(1, 3)
    torch.manual_seed(3)
    export_weights(ValueMLP.for_game(game, hidden=32, layers=2), tmp_path / "w.bin")
    for net in (str(tmp_path / "w.bin"), "oracle"):
        common = dict(net=net, iterations=64,
                      repeats=24, threads=1, seed=5, mode_a=False, full_game=False, oracle_iterations=32,
                      precision="fp32")
        local = evaluate(game, EvalSettings(**common))
        remote = evaluate(game, EvalSettings(**common, backend="ray"), RaySettings(workers=2))
        assert [r["num_policies"] for r in remote["mode_b"]] == [1, 2, 4, 8, 16, 24]
        for a, b in zip(local["mode_b"], remote["mode_b"]):
            assert a["num_policies"] == b["num_policies"]
            assert abs(a["exploitability"] - b["exploitability"]) <= 1e-12
        assert np.abs(local["_mode_b_policy"] - remote["_mode_b_policy"]).max() <= 1e-12


@needs_ray
def test_ray_evaluation_over_seeds_equals_the_local_one(local_ray):
    """evaluation.seeds = 2 on Ray actors: each seed's figure, the mean and the sd equal the
    threads backend's to 1e-12 (the zero net: the seeds' walks differ, so their figures do)."""
    from rebel.config.train import load_train_config
    from rebel.distributed.evaluation import start_workers
    from rebel.train.evaluation import search_exploitability, search_exploitability_ray

    config = load_train_config(None, ["game.num_dice=1", "game.num_faces=3", "search.iterations=64",
                                      "evaluation.repeats=12", "evaluation.threads=1", "evaluation.seed=7",
                                      "evaluation.seeds=2"])
    game = liars_dice(1, 3)
    local = search_exploitability(game, _core.ZeroNet(game), config)
    actors = start_workers("liars_dice", {"num_dice": 1, "num_faces": 3}, {}, "fp32", 2, 1, 0)
    remote = search_exploitability_ray(game, config, None, actors)
    assert list(remote["exploitability_by_seed"]) == [7, 8]
    for seed in (7, 8):
        assert abs(remote["exploitability_by_seed"][seed] - local["exploitability_by_seed"][seed]) <= 1e-12
    assert abs(remote["exploitability"] - local["exploitability"]) <= 1e-12
    assert abs(remote["exploitability_sd"] - local["exploitability_sd"]) <= 1e-12
    assert local["exploitability_sd"] > 0


@needs_ray
@pytest.mark.slow
def test_ray_training_learns_like_threads_and_resumes_on_threads(tmp_path):
    """`rebel train quick` with self-play and evaluation on Ray meets the threads backend's
    learning thresholds (tests/train/test_train.py); the run then resumes on the threads backend
    (two loops either way) and its counts continue exactly."""
    r = run_cli("train", "quick", *TINY, *ON_RAY, "evaluation.backend=ray", "run.epochs=16", "evaluation.every=8",
                "run.checkpoint_every=4", f"run.dir={tmp_path}", "run.name=q", "--json", timeout=600)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    records = _epochs(tmp_path / "q")
    start, end = records[0], records[16]
    assert start["exploitability"] > 0.2
    assert end["exploitability"] < 0.25 * start["exploitability"]
    assert end["exploitability"] < 0.05
    assert end["heldout_mae"] < 0.5 * start["heldout_mae"]
    assert summary["evaluation"]["exploitability"] == end["exploitability"]
    # The weights evaluate to the same number locally (the Ray evaluation is exact).
    ev = run_cli("eval", "--dice", "1", "--faces", "3", "--net", str(tmp_path / "q" / "weights.bin"),
                 "--iters", "128", "--repeats", "64", "--threads", "1", "--no-mode-a", "--json")
    assert json.loads(ev.stdout)["mode_b"][-1]["exploitability"] == pytest.approx(end["exploitability"], abs=1e-12)

    more = run_cli("train", "--resume", str(tmp_path / "q"), "run.epochs=18", "selfplay.backend=threads",
                   "selfplay.threads=2", "evaluation.backend=threads", "--json", timeout=600)
    assert more.returncode == 0, more.stderr
    after = _epochs(tmp_path / "q")
    assert after[18]["examples_generated"] == 19 * 640 and after[18]["net_isa"]
    wrong = run_cli("train", "--resume", str(tmp_path / "q"), "run.epochs=19", "selfplay.backend=threads",
                    "selfplay.threads=3")
    assert wrong.returncode == 2 and "self-play loops" in wrong.stderr


MULTI_NODE = """
import json, sys
import numpy as np
import ray
from ray.cluster_utils import Cluster
from rebel import _core
from rebel.distributed.cluster import connect
from rebel.distributed.evaluation import evaluate
from rebel.search.settings import EvalSettings, RaySettings

cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
for _ in range(2):
    cluster.add_node(num_cpus=1)
cluster.wait_for_nodes()
connect(cluster.address, needed_cpus=3)
nodes = len([n for n in ray.nodes() if n["Alive"]])
game = _core.make_game("liars_dice", {"num_dice": 1, "num_faces": 3})
common = dict(net="oracle", iterations=64,
              repeats=16, threads=1, seed=2, mode_a=False, full_game=False, oracle_iterations=32)
local = evaluate(game, EvalSettings(**common))["mode_b"]
remote = evaluate(game, EvalSettings(**common, backend="ray"),
                  RaySettings(workers=3, address=cluster.address))["mode_b"]
from rebel.distributed.evaluation import start_workers
actors = start_workers("liars_dice", {"num_dice": 1, "num_faces": 3}, {}, "fp32", 3, 1, 0)
hosts = {ray.get(a.info.remote())["node"] for a in actors}
print(json.dumps({"nodes": nodes, "actor_nodes": len(hosts),
                  "diff": max(abs(a["exploitability"] - b["exploitability"]) for a, b in zip(local, remote))}))
ray.shutdown()
cluster.shutdown()
"""


@needs_ray
@pytest.mark.slow
def test_multi_raylet_cluster_evaluates_like_one_process(tmp_path):
    """Three raylets of one CPU on this machine (Ray's own test cluster): three actors, one
    per node, evaluate mode (b) to the local result."""
    r = subprocess.run([sys.executable, "-c", MULTI_NODE], capture_output=True, text=True, cwd=REPO_ROOT,
                       timeout=300, env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)))
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["nodes"] == 3 and out["actor_nodes"] == 3
    assert out["diff"] <= 1e-12
