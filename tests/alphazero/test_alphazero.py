"""AlphaZero's pieces on m,n,k games: the policy-value net and its file, the players, matches
with their score and interval, and `rebel match`."""
from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import run_cli

from rebel import _core

torch = pytest.importorskip("torch")

from rebel.alphazero.match import MatchResult, play_match  # noqa: E402
from rebel.alphazero.net import PolicyValueNet, load_net, predict, save_net  # noqa: E402
from rebel.alphazero.players import NetPlayer, PerfectPlayer, RandomPlayer, RolloutPlayer, make_player  # noqa: E402


def test_net_shapes_and_prediction():
    torch.manual_seed(0)
    net = PolicyValueNet(6, 5, channels=8, blocks=1)
    planes = np.stack([_core.MnkBoard(6, 5, 4).planes()] * 3)
    priors, values = predict(net, planes)
    assert priors.shape == (3, 30) and values.shape == (3,)
    assert np.allclose(priors.sum(axis=1), 1, atol=1e-5) and np.all(np.abs(values) <= 1)
    with pytest.raises(ValueError, match=r"expected \(batch, 4, 6, 5\)"):
        net(torch.zeros(1, 4, 5, 6))


def test_net_file_round_trip_and_bad_files(tmp_path):
    torch.manual_seed(0)
    net = PolicyValueNet(3, 3, channels=8, blocks=1)
    path = tmp_path / "net.pt"
    save_net(net, str(path))
    again = load_net(str(path))
    x = torch.from_numpy(np.stack([_core.MnkBoard().planes()]))
    net.eval()
    for a, b in zip(net(x), again(x)):
        assert torch.equal(a, b)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError, match="not a rebel AlphaZero net"):
        load_net(str(truncated))
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(3)}, foreign)
    with pytest.raises(ValueError, match="no 'rebel-alphazero-net' format tag"):
        load_net(str(foreign))
    with pytest.raises(ValueError, match="no such file"):
        load_net(str(tmp_path / "missing.pt"))


def test_perfect_never_loses_and_beats_random():
    result = play_match(PerfectPlayer(3, 3, 3, seed=0), RandomPlayer(seed=1), 3, 3, 3, games=60)
    assert result.losses == 0
    assert result.as_first["wins"] >= 25  # random blunders as second player almost always
    low, high = result.interval()
    assert low <= result.score <= high and low > 0.6


def test_perfect_against_perfect_is_all_draws():
    result = play_match(PerfectPlayer(3, 3, 3, seed=0), PerfectPlayer(3, 3, 3, seed=1), 3, 3, 3, games=20)
    assert result.draws == 20 and result.interval() == (0.5, 0.5)


def test_rollout_mcts_beats_random_on_tic_tac_toe():
    result = play_match(RolloutPlayer(400, seed=0), RandomPlayer(seed=1), 3, 3, 3, games=40)
    assert result.losses == 0 and result.score > 0.8


def test_net_player_with_an_untrained_net_plays_legal_games_in_batches():
    torch.manual_seed(0)
    net = PolicyValueNet(4, 4, channels=8, blocks=1)
    player = NetPlayer(net, simulations=16, seed=0, max_games=8)
    result = play_match(player, RandomPlayer(seed=2), 4, 4, 3, games=8)
    assert result.games == 8 and result.wins + result.draws + result.losses == 8


def test_match_result_interval():
    r = MatchResult("a", "b", "g", games=16, wins=6, draws=4, losses=6)
    low, high = r.interval()
    scores = np.array([1] * 6 + [0.5] * 4 + [0] * 6)
    half = 1.96 * scores.std(ddof=1) / 4
    assert r.score == 0.5 and low == pytest.approx(0.5 - half) and high == pytest.approx(0.5 + half)
    clipped = MatchResult("a", "b", "g", games=4, wins=3, draws=0, losses=1)
    assert clipped.interval()[1] == 1.0
    # One game is no interval (rebel.util.stats.MATCH): all of [0, 1], not the point it once was.
    assert MatchResult("a", "b", "g", games=1, wins=1).interval() == (0.0, 1.0)


def test_make_player_bad_specs():
    with pytest.raises(ValueError, match="unknown player 'alphago'"):
        make_player("alphago", 3, 3, 3)
    with pytest.raises(ValueError, match="mcts:N with N an integer"):
        make_player("mcts:many", 3, 3, 3)
    with pytest.raises(ValueError, match="must be >= 1"):
        make_player("mcts:0", 3, 3, 3)
    with pytest.raises(ValueError, match="at most 64 cells"):
        make_player("perfect", 15, 15, 5)


def test_make_player_refuses_a_net_for_another_board(tmp_path):
    path = tmp_path / "net.pt"
    save_net(PolicyValueNet(4, 4, channels=4, blocks=0), str(path))
    with pytest.raises(ValueError, match="the net is for a 4 x 4 board, the game is 3 x 3"):
        make_player(f"net:{path}:8", 3, 3, 3)
    assert make_player(f"net:{path}:8", 4, 4, 3).simulations == 8


def test_match_cli():
    r = run_cli("match", "perfect", "random", "--games", "10", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["games"] == 10 and report["losses"] == 0
    assert report["player_a"] == "perfect" and len(report["score_interval_95"]) == 2


def test_match_cli_records_the_leaf_evaluator(tmp_path):
    torch.manual_seed(0)
    path = tmp_path / "net.pt"
    save_net(PolicyValueNet(3, 3, channels=8, blocks=1), str(path))
    reports = {}
    for inference in ("native", "torch"):
        r = run_cli("match", f"net:{path}:16", "random", "--games", "4", "--inference", inference,
                    "--precision", "fp32" if inference == "native" else "auto", "--json")
        assert r.returncode == 0, r.stderr
        reports[inference] = json.loads(r.stdout)
    assert reports["native"]["inference"]["a"].startswith("native-fp32") and reports["native"]["inference"]["b"] is None
    assert reports["torch"]["inference"]["a"] == "torch"
    # The same searches: float32 native and torch agree to 1e-7, far inside any visit-count tie.
    assert {k: v for k, v in reports["native"].items() if k != "inference"} == \
        {k: v for k, v in reports["torch"].items() if k != "inference"}
    text = run_cli("match", f"net:{path}:16", "random", "--games", "2")
    assert "(leaves: native-" in text.stdout
    bad = run_cli("match", f"net:{path}:16", "random", "--inference", "torch", "--precision", "bf16")
    assert bad.returncode == 2 and "fp32 only" in bad.stderr


@pytest.mark.parametrize("args,message", [
    (["match", "perfect", "random", "--k", "4"], "k must be <= max(m, n)"),
    (["match", "perfect", "nobody"], "unknown player 'nobody'"),
    (["match", "perfect", "random", "--games", "0"], "--games must be >= 1"),
    (["match", "perfect", "random", "--game", "kuhn"], "m,n,k games only"),
    (["match", "net:/nonexistent.pt", "random"], "no such file"),
])
def test_match_cli_bad_input_exit_2(args, message):
    r = run_cli(*args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------------------ every reply


def test_perfect_never_loses_against_every_reply():
    from rebel.alphazero.match import against_every_reply

    lines = against_every_reply(PerfectPlayer(3, 3, 3, seed=0), 3, 3, 3)
    assert lines["first"]["losses"] == 0 and lines["second"]["losses"] == 0
    assert lines["first"]["lines"] > 0 and lines["second"]["lines"] > 0
    optimal = against_every_reply(PerfectPlayer(3, 3, 3, seed=0), 3, 3, 3, optimal_only=True)
    for side in ("first", "second"):  # tic-tac-toe is a draw with best play on both sides
        assert optimal[side]["draws"] == optimal[side]["lines"] > 0


def test_random_loses_some_line_against_every_reply():
    from rebel.alphazero.match import against_every_reply

    lines = against_every_reply(RandomPlayer(seed=0), 3, 3, 3)
    assert lines["first"]["losses"] > 0 and lines["second"]["losses"] > 0
    with pytest.raises(ValueError, match="too large to try every reply"):
        against_every_reply(RandomPlayer(seed=0), 4, 4, 4, max_positions=1000)


# ------------------------------------------------------------------------------ rebel train (AlphaZero)

TINY = ["run.epochs=2", "selfplay.games=8", "mcts.simulations=8", "trainer.steps_per_epoch=5", "trainer.batch_size=32",
        "evaluation.every=2", "evaluation.games=4", "evaluation.simulations=8", "evaluation.every_reply=false",
        "model.channels=8", "model.blocks=1"]


def test_alphazero_training_runs_and_resumes_exactly(tmp_path):
    straight = run_cli("train", "alphazero_tictactoe", *TINY, f"run.dir={tmp_path}", "run.name=straight", "--json")
    assert straight.returncode == 0, straight.stderr
    summary = json.loads(straight.stdout)
    assert summary["epoch"] == 2 and summary["games_played"] == 16
    assert summary["evaluation"]["vs_perfect"]["losses"] + summary["evaluation"]["vs_perfect"]["draws"] + \
        summary["evaluation"]["vs_perfect"]["wins"] == 4
    half = run_cli("train", "alphazero_tictactoe", *TINY, "run.epochs=1", f"run.dir={tmp_path}", "run.name=resumed")
    assert half.returncode == 0, half.stderr
    resumed = run_cli("train", "--resume", str(tmp_path / "resumed"), "run.epochs=2")
    assert resumed.returncode == 0, resumed.stderr
    a, b = load_net(str(tmp_path / "straight" / "net.pt")), load_net(str(tmp_path / "resumed" / "net.pt"))
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        assert torch.equal(x, y), name
    rows = [json.loads(line) for line in (tmp_path / "resumed" / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in rows] == [1, 2]
    straight_rows = [json.loads(line) for line in (tmp_path / "straight" / "metrics.jsonl").read_text().splitlines()]
    assert [r["policy_loss"] for r in rows] == [r["policy_loss"] for r in straight_rows]
    assert all(r["inference"].startswith("native-") for r in rows)  # the default leaf evaluator, recorded


@pytest.mark.parametrize("override,message", [
    ("game.k=5", "k must be <= max(m, n)"),
    ("evaluation.opponents=[alphago]", "unknown player 'alphago'"),
    ("mcts.simulations=0", "mcts.simulations must be >= 1"),
    ("mcts.inference=onnx", "mcts.inference must be 'native' or 'torch'"),
    ("trainer.learning_rate=1", "trainer.learning_rate"),
    ("game.name=kuhn", "AlphaZero runs on m,n,k games"),
    ("trainer.device=tpu", "trainer.device must be 'cpu', 'cuda' or 'cuda:N'"),
])
def test_alphazero_config_errors_exit_2(override, message, tmp_path):
    r = run_cli("train", "alphazero_tictactoe", override, f"run.dir={tmp_path}")
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not any(tmp_path.iterdir())  # no run directory left behind


def test_alphazero_resume_refuses_other_overrides(tmp_path):
    r = run_cli("train", "alphazero_tictactoe", *TINY, "run.epochs=1", f"run.dir={tmp_path}", "run.name=r")
    assert r.returncode == 0, r.stderr
    again = run_cli("train", "--resume", str(tmp_path / "r"), "mcts.simulations=100")
    assert again.returncode == 2 and "--resume takes only" in again.stderr
    assert "trainer.device" in again.stderr  # may change: a GPU run resumes on a CPU (tests/nets/test_cuda.py)
    if not torch.cuda.is_available():
        gpu = run_cli("train", "--resume", str(tmp_path / "r"), "run.epochs=2", "trainer.device=cuda")
        assert gpu.returncode == 2 and "sees no CUDA device" in gpu.stderr and "Traceback" not in gpu.stderr


@pytest.mark.slow
def test_tic_tac_toe_config_learns_to_never_lose(tmp_path):
    """The shipped config (60 epochs, about 2 minutes on 2 cores): the final net with 50
    simulations per move loses no line against any sequence of opponent moves, moving first
    or second (stronger than never losing to the perfect player)."""
    r = run_cli("train", "alphazero_tictactoe", f"run.dir={tmp_path}", "run.name=ttt", "--json", timeout=900)
    assert r.returncode == 0, r.stderr
    lines = json.loads(r.stdout)["evaluation"]["every_reply"]
    assert lines["first"]["losses"] == 0 and lines["second"]["losses"] == 0, lines
    assert lines["first"]["lines"] > 50 and lines["second"]["lines"] > 300


# ------------------------------------------------------------------------------ rebel play on a board


def _play(args, text):
    import os
    import subprocess
    import sys

    from conftest import REPO_ROOT

    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.run([sys.executable, "-m", "rebel", "play", *args], input=text, capture_output=True, text=True,
                          timeout=120, env=env, cwd=REPO_ROOT)


def test_play_tic_tac_toe_against_the_perfect_bot_from_a_pipe():
    # You (X) open in a corner and then play the edges: the perfect bot wins.
    r = _play(["--game", "mnk", "--seat", "0", "--hands", "1", "--seed", "1", "--bot", "perfect"],
              "a1\na1\nq7\n5\nb1\na2\nc2\nb3\n")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "not a legal move: a1 is already occupied" in out
    assert "not a legal move: 'q7' is not a cell of this board" in out
    assert "3 . . .\n2 . . .\n1 . . .\n  a b c" in out  # the empty board, rows from the top
    assert "you lose" in out and "final score after 1 game: you -1 in all" in out


def test_play_board_bad_input_exit_2():
    for args, message in [(["--game", "mnk", "--bot", "alphago"], "unknown player 'alphago'"),
                          (["--game", "kuhn", "--bot", "perfect"], "--bot is for m,n,k games"),
                          (["--game", "mnk", "--m", "3", "--k", "5"], "k must be <= max(m, n)"),
                          (["--game", "mnk", "--bot", "perfect", "--m", "9", "--n", "9", "--k", "5"],
                           "at most 64 cells")]:
        r = _play(args, "")
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


def test_alphazero_ctrl_c_saves_the_last_epoch_and_resumes(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import REPO_ROOT, default_sigint

    args = [*TINY, "run.epochs=200", "evaluation.every=0", f"run.dir={tmp_path}", "run.name=c"]
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "rebel", "train", "alphazero_tictactoe", *args], cwd=REPO_ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    metrics = tmp_path / "c" / "metrics.jsonl"
    try:
        deadline = time.time() + 240
        while time.time() < deadline and not (metrics.is_file() and len(metrics.read_text().splitlines()) >= 2):
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "continue with `rebel train --resume" in err and "Traceback" not in err, err
    done = len(metrics.read_text().splitlines())
    resumed = run_cli("train", "--resume", str(tmp_path / "c"), f"run.epochs={done + 1}", "--json")
    assert resumed.returncode == 0, (err, resumed.stderr)
    assert json.loads(resumed.stdout)["epoch"] == done + 1
    assert [json.loads(line)["epoch"] for line in metrics.read_text().splitlines()] == list(range(1, done + 2))
