"""The river net and turn search experiments end to end on small inputs
(experiments/holdem_river_net.py, experiments/holdem_turn_search.py): a net trained on a few
solved river PBSs, saved, loaded by the turn search and measured beside exact leaves."""
from __future__ import annotations

import json
import sys

import pytest
import torch
from conftest import REPO_ROOT

from rebel.games.holdem_spot import load_spot
from rebel.train.holdem_river_data import RiverDataSettings, write_shard

SHORT_TURN = """board: 7s 6h 3d 2c
pot: 10
stack: 30
ranges: {oop: full, ip: full}
bets:
  turn: {bet: "50%, a", raise: "a"}
  river: {bet: "a"}
ranks: 6
suits: 4
"""


def test_a_small_net_trains_saves_and_leads_a_search(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.syspath_prepend(str(REPO_ROOT / "experiments"))
    import holdem_river_net
    import holdem_turn_search

    spot_file = tmp_path / "short.yaml"
    spot_file.write_text(SHORT_TURN)
    template = load_spot(spot_file)
    for shard in range(3):
        write_shard(template, tmp_path / "data", shard, 4, seed=1, settings=RiverDataSettings(target_pct=2.0))
    net_json, net_file = tmp_path / "net.json", tmp_path / "net.pt"
    assert holdem_river_net.main(["--data", str(tmp_path / "data"), "--heldout", "1", "--hidden", "8", "--layers", "1",
                                  "--epochs", "2", "--batch", "4", "--threads", "1", "--augment", "suits",
                                  "--out", str(net_json), "--save", str(net_file)]) == 0
    result = json.loads(net_json.read_text())
    assert (result["train_rows"], result["heldout_rows"], len(result["curve"])) == (8, 4, 2)
    assert result["final"]["rmse_pot"] > 0 and result["zero_net"]["rmse_pot"] > 0 and "family" in result["cpu"]
    assert set(torch.load(net_file, weights_only=True)) == {"hidden", "layers", "target", "chip_scale", "state_dict"}

    out = tmp_path / "search.json"
    args = ["--spot", str(spot_file), "--iterations", "2", "--leaves", f"net:{net_file}", "exact", "--out", str(out)]
    assert holdem_turn_search.main(args) == 0
    runs = json.loads(out.read_text())["runs"]
    assert set(runs) == {"full_game_dcfr", f"net:{net_file}", "exact"}
    for run in runs.values():
        assert run["exploitability"] > 0 and run["command"].startswith("python experiments/holdem_turn_search.py")
    assert runs["exact"]["river_exploitability"] <= 0.1 * 10 / 100
    assert holdem_turn_search.main(args) == 0  # resumed: every kind already there
    assert json.loads(out.read_text())["runs"] == runs
    chips = tmp_path / "chips.pt"
    holdem_river_net.main(["--data", str(tmp_path / "data"), "--heldout", "1", "--hidden", "8", "--layers", "1",
                           "--epochs", "1", "--threads", "1", "--target", "chips", "--out", str(net_json),
                           "--save", str(chips)])
    with pytest.raises(ValueError, match="trained on 'chips' targets"):
        holdem_turn_search.load_net(str(chips))
    for name in ("holdem_river_net", "holdem_turn_search", "holdem_river_data"):
        sys.modules.pop(name, None)
