"""benchmarks/bench_selfplay_reuse.py runs and reports what it says (no timing is asserted:
speed is measured by the benchmark itself, never by a unit test)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_selfplay_reuse  # noqa: E402


def test_both_arms_play_the_same_episodes(tmp_path, capsys):
    import torch

    import rebel
    from rebel.nets.value_mlp import ValueMLP, weights_to_bytes

    torch.manual_seed(3)
    trained = tmp_path / "leduc.bin"
    trained.write_bytes(weights_to_bytes(ValueMLP.for_game(rebel.make_game("leduc"), hidden=32)))
    out = tmp_path / "reuse.json"
    assert bench_selfplay_reuse.main(["--steps", "6", "--blocks", "2", "--iterations", "16",
                                      "--games", "leduc", "liars_dice_1x4f", "--weights", f"leduc={trained}",
                                      "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert [c["game"] for c in report["cases"]] == ["leduc", "liars_dice_1x4f"]
    assert report["cases"][0]["net"] == str(trained) and "random" in report["cases"][1]["net"]
    for case in report["cases"]:
        plain, reuse = case["no_reuse"], case["reuse"]
        assert plain["steps"] == reuse["steps"] == 12
        # The same seeds and bit-identical steps: the same episodes, the same initial-PBS steps.
        assert plain["initial_pbs_share"] == reuse["initial_pbs_share"] > 0
        assert (plain["initial_solves_computed"], plain["initial_solves_reused"]) == (0, 0)
        assert reuse["initial_solves_computed"] == 1
        assert reuse["initial_solves_reused"] == round(reuse["initial_pbs_share"] * 12) - 1
        assert case["speedup"] > 0


def test_bad_arguments_are_refused():
    with pytest.raises(SystemExit):
        bench_selfplay_reuse.main(["--steps", "0"])
    with pytest.raises(SystemExit):
        bench_selfplay_reuse.main(["--games", "chess"])
    with pytest.raises(SystemExit):
        bench_selfplay_reuse.main(["--weights", "chess=x.bin"])
