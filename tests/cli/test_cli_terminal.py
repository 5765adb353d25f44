"""`rebel train` on a real (pseudo-)terminal: log lines never land inside a progress bar, and the
resolved config is printed only with -v (one line naming it otherwise); `rebel play` says
while the bot is thinking and erases the line."""
from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios

import pytest
from conftest import REPO_ROOT, run_cli

pytest.importorskip("torch")

SMALL = ["run.epochs=3", "trainer.epoch_examples=1024", "search.iterations=64", "evaluation.every=1",
         "evaluation.repeats=16", "evaluation.heldout_steps=16", "evaluation.threads=1", "selfplay.threads=1"]
CONTROL = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])|[\r\n\b]|[^\x1b\r\n\b]+")
COLUMNS = 120


def screen(output: str, columns: int = COLUMNS) -> list[str]:
    """What a terminal shows after `output` (every row ever written, no scrolling limit):
    printable text, carriage return, newline, backspace, cursor up/down (A/B) and erase in
    line (K) - what tqdm and logging write."""
    rows: list[list[str]] = [[]]
    row = col = 0
    for m in CONTROL.finditer(output):
        text = m.group(0)
        if text == "\r":
            col = 0
        elif text == "\n":
            row += 1
        elif text == "\b":
            col = max(0, col - 1)
        elif m.group(2):
            n = int(m.group(1) or 1) if m.group(1).isdigit() else 1
            if m.group(2) == "A":
                row = max(0, row - n)
            elif m.group(2) == "B":
                row += n
            elif m.group(2) == "K":
                while len(rows) <= row:
                    rows.append([])
                del rows[row][col:]
            continue
        else:
            for ch in text:
                if col >= columns:  # wrap
                    row, col = row + 1, 0
                while len(rows) <= row:
                    rows.append([])
                line = rows[row]
                line.extend(" " * (col - len(line) + 1)) if len(line) <= col else None
                line[col] = ch
                col += 1
        while len(rows) <= row:
            rows.append([])
    return ["".join(r).rstrip() for r in rows]


def run_in_terminal(args: list[str], timeout: float = 240, typed: str = "") -> tuple[int, str]:
    """Runs `python -m rebel ARGS` with stdin, stdout and stderr on a 120-column pseudo-terminal,
    `typed` typed into it (the terminal holds each line until the program reads it)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "rebel", *args], stdin=slave, stdout=slave, stderr=slave,
                            close_fds=True, env=env, cwd=REPO_ROOT)
    os.close(slave)
    if typed:
        os.write(master, typed.encode())
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout)
    os.close(master)
    return proc.returncode, b"".join(chunks).decode(errors="replace")


def test_log_lines_do_not_break_the_training_bar(tmp_path):
    code, out = run_in_terminal(["train", "-v", "quick", *SMALL, f"run.dir={tmp_path}", "run.name=t"])
    assert code == 0, out
    assert "training:" in out or "epoch" in out  # the bar was drawn
    shown = screen(out)
    logged = [line for line in shown if "NFO rebel" in line]
    assert len(logged) >= 3, out  # checkpoints and evaluations logged while bars are shown
    for line in logged:  # a line of its own: not "...ex/s=748]I" then "NFO rebel.train: ..."
        assert line.startswith("INFO rebel"), line
    bars = [line for line in shown if "|" in line and "]" in line]
    assert bars and all(line.endswith("]") for line in bars), bars
    assert "selfplay:" in out  # -v prints the resolved config


def test_config_is_named_not_printed_without_verbose(tmp_path):
    result = run_cli("train", "quick", *SMALL, "run.epochs=1", "evaluation.every=0", "evaluation.final=false",
                     "evaluation.references=false", f"run.dir={tmp_path}", "run.name=q", timeout=240)
    assert result.returncode == 0, result.stderr
    assert "selfplay:" not in result.stderr
    assert f"resolved config: {tmp_path / 'q' / 'config.yaml'}" in result.stderr
    assert (tmp_path / "q" / "config.yaml").read_text().startswith("game:")


def test_play_says_the_bot_is_thinking_on_a_terminal_then_erases_it():
    """The bot's search (20 s at the first no-limit Leduc hand with exact leaves) is announced
    on a terminal, and the line is erased once the hand is dealt; `q` ends the session with
    the final score (a pipe gets no such line: tests/play/test_play_leduc.py)."""
    code, out = run_in_terminal(["play", "--game", "kuhn", "--net", "oracle", "--iters", "16", "--seed", "3",
                                 "--seat", "0"], typed="q\n")
    assert code == 0, out
    assert "(the bot is thinking: solving its search subgames...)" in out
    shown = screen(out)
    assert not any("thinking" in line for line in shown), shown
    assert any(line.startswith("--- hand 1: you are player 0") for line in shown), shown
    assert "(you quit)" in out and "final score after 0 hands" in out
