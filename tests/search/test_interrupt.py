"""Ctrl-C stops long C++ calls promptly: the CLI exits with status 130, no traceback."""
from __future__ import annotations

import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import REPO_ROOT, default_sigint

LONG_COMMANDS = {
    "solve": ["solve", "--game", "liars_dice", "--dice", "2", "--faces", "4", "--iters", "1000000", "--no-progress"],
    "eval": ["eval", "--net", "oracle", "--iters", "1024", "--repeats", "1024", "--threads", "2", "--no-progress"],
}


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("command", sorted(LONG_COMMANDS))
def test_ctrl_c_stops_long_commands(command):
    proc = subprocess.Popen([sys.executable, "-m", "rebel", *LONG_COMMANDS[command]], cwd=REPO_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        time.sleep(3.0)  # well inside the C++ loop
        assert proc.poll() is None, proc.communicate()
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert time.monotonic() - sent < 10
        assert proc.returncode == 130, err
        assert "interrupted" in err and "Traceback" not in err
    finally:
        if proc.poll() is None:  # never leave a 30-minute evaluation running
            proc.kill()
            proc.communicate()


class _StopFromCallback(Exception):
    pass


def _raise_from_progress(done: int) -> None:
    raise _StopFromCallback(f"stopped at {done}")


def test_an_exception_in_a_progress_callback_stops_the_call_and_propagates():
    """A progress callback that raises (as KeyboardInterrupt does when Ctrl-C lands while it
    runs Python code) cancels the C++ work and the exception reaches the caller: before, the
    worker thread was left joinable and the process aborted."""
    import rebel
    from rebel import _core as core

    game = rebel.make_game("liars_dice", {"num_dice": 1, "num_faces": 4})
    search = core.TestTimeSearch(game, core.OracleNet(game, "lcfr", 256), "lcfr", 2, 256)  # each call > 0.5 s
    calls = {
        "evaluate_sampled": lambda: search.evaluate_sampled(4096, threads=2, seed=0, progress=_raise_from_progress),
        "sampled_sum": lambda: search.sampled_sum(0, 4096, threads=2, seed=0, progress=_raise_from_progress),
        "average_policy": lambda: search.average_policy(progress=_raise_from_progress),
    }
    mnk = rebel.make_game("mnk", {"m": 3, "n": 3, "k": 3})
    perfect = core.PerfectInfoSearch(mnk, core.ZeroNet(mnk), "lcfr", 2, 256)
    calls["PerfectInfoSearch.evaluate"] = lambda: perfect.evaluate(threads=2, progress=_raise_from_progress)
    for call in calls.values():
        with pytest.raises(_StopFromCallback):
            call()
    # The work was awaited and stopped: the objects stay usable.
    assert search.num_search_roots > 0 and perfect.num_search_roots > 0
    assert np.isfinite(search.evaluate_sampled(2, threads=1, seed=0)["exploitability"][-1])
