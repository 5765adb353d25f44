"""Policy files: exact round trips (JSON and .npz), the JSON layout, strict rejection of
malformed, truncated or foreign files, and atomic writes."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import kuhn, liars_dice, solved

import rebel
from rebel.interop.policy_io import (
    load_policy,
    load_policy_json,
    load_policy_npz,
    policy_from_arrays,
    policy_from_json_dict,
    policy_to_arrays,
    policy_to_json_dict,
    save_policy,
    save_policy_json,
    save_policy_npz,
)

GAMES = {"kuhn": kuhn, "1x4f": lambda: liars_dice(1, 4), "2x3f": lambda: liars_dice(2, 3)}


@pytest.fixture(scope="module")
def lcfr_1x4f():
    return solved(liars_dice(1, 4), "lcfr", 1024)


def _doc(result) -> dict:
    return policy_to_json_dict(rebel.make_game(result.game["name"],
                                               {k: v for k, v in result.game.items() if k != "name"}),
                               result.policy, result.tree)


# ------------------------------------------------------------------------- round trips

@pytest.mark.parametrize("name", list(GAMES))
@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_round_trip_is_exact(tmp_path, name, suffix):
    g = GAMES[name]()
    r = solved(g, "lcfr", 256)
    path = tmp_path / f"policy{suffix}"
    save_policy(path, g, r.policy, r.tree)
    loaded = load_policy(path, expected_game=g)
    assert np.array_equal(loaded.policy, r.policy)
    again = rebel.exploitability(loaded.game, loaded.tree, loaded.policy)
    assert again["exploitability"] == r.exploitability  # exactly, not approximately
    assert tuple(again["br_values"]) == r.br_values
    assert again["game_value"] == r.game_value
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary files left


def test_json_layout_liars_dice(lcfr_1x4f):
    g = liars_dice(1, 4)
    doc = _doc(lcfr_1x4f)
    assert doc["game"] == {"name": "liars_dice", "num_dice": 1, "num_faces": 4}
    t = lcfr_1x4f.tree
    assert len(doc["policy"]) == len(t.decision_nodes) * g.num_hands
    # Root: every bid legal, "liar" (id 8) not.
    for h in range(4):
        row = doc["policy"][f"{h}|"]
        assert len(row) == 9 and row[8] == 0.0 and sum(row) == pytest.approx(1.0, abs=1e-12)
    # After bids 2 ("1x2") and 5 ("2x1"): bids 6, 7 and liar legal, everything else 0.
    row = doc["policy"]["3|2,5"]
    assert row[:6] == [0.0] * 6 and sum(row) == pytest.approx(1.0, abs=1e-12)
    n = t.find([2, 5])
    kids = range(t.first_child[n], t.first_child[n] + t.num_children[n])
    assert [row[t.action[c]] for c in kids] == [lcfr_1x4f.policy[c, 3] for c in kids]


def test_json_layout_kuhn():
    r = solved(kuhn(), "cfr", 64)
    doc = policy_to_json_dict(kuhn(), r.policy, r.tree)
    assert doc["game"] == {"name": "kuhn"}
    assert sorted(doc["policy"]) == sorted(f"{h}|{hist}" for h in range(3) for hist in ["", "0", "1", "0,1"])


def test_file_is_plain_json_with_repr_floats(tmp_path, lcfr_1x4f):
    path = tmp_path / "p.json"
    save_policy_json(path, liars_dice(1, 4), lcfr_1x4f.policy)
    doc = json.loads(path.read_text())
    assert doc == _doc(lcfr_1x4f)


def test_arrays_round_trip(lcfr_1x4f):
    arrays = policy_to_arrays(liars_dice(1, 4), lcfr_1x4f.policy)
    assert arrays["policy"].dtype == np.float64 and arrays["policy"].shape == (511, 4)
    loaded = policy_from_arrays(arrays)
    assert np.array_equal(loaded.policy, lcfr_1x4f.policy)


# ---------------------------------------------------------------- malformed JSON input

def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(text)
    return path


def test_truncated_json_rejected(tmp_path, lcfr_1x4f):
    good = tmp_path / "good.json"
    save_policy_json(good, liars_dice(1, 4), lcfr_1x4f.policy)
    text = good.read_text()
    for cut in (0, 10, len(text) // 2, len(text) - 3):
        with pytest.raises(ValueError, match="not valid JSON"):
            load_policy_json(_write(tmp_path, text[:cut]))


def test_binary_garbage_rejected(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match="UTF-8"):
        load_policy_json(path)


def _mutated(result, mutate) -> dict:
    doc = json.loads(json.dumps(_doc(result)))
    mutate(doc)
    return doc


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d.pop("policy"), "missing key"),
    (lambda d: d.update(extra=1), "unknown key"),
    (lambda d: d.update(game="liars_dice"), "'game' must be an object"),
    (lambda d: d["game"].update(name="chess"), "unknown game 'chess'"),
    (lambda d: d["game"].update(num_sides=3), "no parameter"),
    (lambda d: d["game"].update(num_dice=0), "num_dice must be >= 1"),
    (lambda d: d["game"].update(num_faces="4"), "must be an int"),
    (lambda d: d["game"].update(num_faces=5), "decision points missing"),
    (lambda d: d.update(policy=[1, 2]), "'policy' must be an object"),
    (lambda d: d["policy"].pop("2|0,3"), "1 of 1024 decision points missing, first '2|0,3'"),
    (lambda d: d["policy"].update({"x|": [1.0]}), "'x\\|' is malformed"),
    (lambda d: d["policy"].update({"9|": [1.0] + [0.0] * 8}), "not a decision point"),
    (lambda d: d["policy"].update({"0|0,8": [0.0] * 9}), "not a decision point"),  # terminal history
    (lambda d: d["policy"].update({"0|3,1": [0.0] * 9}), "not a decision point"),  # illegal history
    (lambda d: d["policy"].update({"0|": [0.25] * 4}), "list of 9 probabilities"),
    (lambda d: d["policy"].update({"0|": "uniform"}), "list of 9 probabilities"),
    (lambda d: d["policy"].update({"0|": [-0.5, 1.5] + [0.0] * 7}), "negative or non-finite"),
    (lambda d: d["policy"].update({"0|": ["1.0"] + [0.0] * 8}), "non-number"),
    (lambda d: d["policy"].update({"0|": [True] + [0.0] * 8}), "non-number"),
    (lambda d: d["policy"].update({"0|": [0.5] + [0.0] * 8}), "does not sum to 1"),
    (lambda d: d["policy"].update({"1|": [0.5] + [0.0] * 7 + [0.5]}), "illegal action\\(s\\) \\[8\\]"),
    (lambda d: d["policy"].update({"1|7": [0.0] * 9}), "does not sum to 1"),
])
def test_malformed_documents_rejected(lcfr_1x4f, mutate, message):
    with pytest.raises(ValueError, match=message):
        policy_from_json_dict(_mutated(lcfr_1x4f, mutate))


def test_non_finite_and_duplicate_keys_rejected(tmp_path, lcfr_1x4f):
    good = tmp_path / "good.json"
    save_policy_json(good, liars_dice(1, 4), lcfr_1x4f.policy)
    text = good.read_text()
    key_line = next(line for line in text.splitlines() if line.startswith('  "1|"'))
    with pytest.raises(ValueError, match="non-finite number NaN"):
        load_policy_json(_write(tmp_path, text.replace(key_line, '  "1|": [NaN, 0, 0, 0, 0, 0, 0, 0, 1],')))
    with pytest.raises(ValueError, match="duplicate key '1\\|'"):
        load_policy_json(_write(tmp_path, text.replace(key_line, key_line + "\n" + key_line)))


def test_wrong_game_rejected(tmp_path, lcfr_1x4f):
    path = tmp_path / "p.json"
    save_policy_json(path, liars_dice(1, 4), lcfr_1x4f.policy)
    with pytest.raises(ValueError, match=r"policy is for liars_dice\(num_dice=1, num_faces=4\), expected "
                                         r"liars_dice\(num_dice=1, num_faces=5\)"):
        load_policy_json(path, expected_game=liars_dice(1, 5))
    with pytest.raises(ValueError, match="expected kuhn"):
        load_policy(path, expected_game=kuhn())


# ------------------------------------------------------------------ malformed npz input

def _npz_bytes(arrays: dict) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def test_truncated_npz_rejected(tmp_path, lcfr_1x4f):
    good = tmp_path / "good.npz"
    save_policy_npz(good, liars_dice(1, 4), lcfr_1x4f.policy)
    raw = good.read_bytes()
    for cut in (0, 20, len(raw) // 2, len(raw) - 10):
        bad = tmp_path / "bad.npz"
        bad.write_bytes(raw[:cut])
        with pytest.raises(ValueError, match="truncated or corrupted"):
            load_policy_npz(bad)


@pytest.mark.parametrize("mutate,message", [
    (lambda a: a.pop("parent"), "missing array"),
    (lambda a: a.update(extra=np.zeros(1)), "unknown array"),
    (lambda a: a.update(policy=a["policy"].astype(np.float32)), "dtype float64"),
    (lambda a: a.update(policy=a["policy"][:-1]), "shape"),
    (lambda a: a.update(policy=a["policy"].T.copy()), "shape"),
    (lambda a: a.update(game=np.array('{"name": "liars_dice", "num_faces": 5}')), "'parent' does not match"),
    (lambda a: a.update(game=np.array("{not json")), "'game' is not valid JSON"),
    (lambda a: a.update(game=np.array(3)), "0-d string array"),
    (lambda a: a.update(action=a["action"][::-1].copy()), "'action' does not match"),
    (lambda a: a["policy"].__setitem__((3, 1), np.nan), "finite and non-negative"),
    (lambda a: a["policy"].__setitem__((3, 1), 0.7), "sums to"),
])
def test_malformed_npz_rejected(tmp_path, lcfr_1x4f, mutate, message):
    arrays = policy_to_arrays(liars_dice(1, 4), lcfr_1x4f.policy)
    mutate(arrays)
    path = tmp_path / "bad.npz"
    path.write_bytes(_npz_bytes(arrays))
    with pytest.raises(ValueError, match=message):
        load_policy_npz(path)


def test_pickled_npz_refused(tmp_path, lcfr_1x4f):
    arrays = policy_to_arrays(liars_dice(1, 4), lcfr_1x4f.policy)
    arrays["game"] = np.array([{"name": "liars_dice"}], dtype=object)
    path = tmp_path / "bad.npz"
    path.write_bytes(_npz_bytes(arrays))
    with pytest.raises(ValueError):
        load_policy_npz(path)


def test_wrong_game_npz_rejected(tmp_path, lcfr_1x4f):
    path = tmp_path / "p.npz"
    save_policy_npz(path, liars_dice(1, 4), lcfr_1x4f.policy)
    with pytest.raises(ValueError, match="policy is for"):
        load_policy_npz(path, expected_game=liars_dice(2, 3))


# ------------------------------------------------------------------------------ export

def test_invalid_policy_is_not_written_and_old_file_survives(tmp_path, lcfr_1x4f):
    g = liars_dice(1, 4)
    path = tmp_path / "p.json"
    save_policy_json(path, g, lcfr_1x4f.policy)
    before = path.read_bytes()
    bad = lcfr_1x4f.policy.copy()
    bad[5, 0] += 0.1
    with pytest.raises(ValueError, match="sums to"):
        save_policy_json(path, g, bad)
    with pytest.raises(TypeError, match="float64"):
        save_policy_npz(path.with_suffix(".npz"), g, bad.astype(np.float32))
    with pytest.raises(ValueError, match="shape"):
        save_policy_json(path, g, lcfr_1x4f.policy[:10])
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["p.json"]


def test_unknown_suffix_rejected(tmp_path, lcfr_1x4f):
    with pytest.raises(ValueError, match=".json or .npz"):
        save_policy(tmp_path / "p.txt", liars_dice(1, 4), lcfr_1x4f.policy)
    with pytest.raises(ValueError, match=".json or .npz"):
        load_policy(tmp_path / "p.pkl")


def test_subgame_tree_refused(lcfr_1x4f):
    g = liars_dice(1, 4)
    sub = rebel.build_tree(g, [0], 2)
    with pytest.raises(ValueError, match="full-game"):
        policy_to_json_dict(g, rebel.uniform_policy(g, sub), sub)
