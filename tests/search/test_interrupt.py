"""Ctrl-C stops long C++ calls promptly: the CLI exits with status 130, no traceback."""
from __future__ import annotations

import signal
import subprocess
import sys
import time

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
