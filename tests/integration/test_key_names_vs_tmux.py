"""`muxctl send --keys` names keys as tmux's send-keys does: a real tmux sends each name
into a pane whose program records the bytes it reads (a raw terminal), and
muxctl.key_names must give the same bytes — except where tmux is not an xterm, listed
in DIFFERENT with why."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from muxctl.key_names import key_bytes
from tests.harness import DEFAULT_TIMEOUT, wait_for

NAMES = [
    "Enter",
    "Escape",
    "Tab",
    "BTab",
    "Space",
    "BSpace",
    "Up",
    "Down",
    "Left",
    "Right",
    "C-Up",
    "S-Up",
    "M-Up",
    "C-M-S-Left",
    "C-Home",
    "PageUp",
    "PgDn",
    "NPage",
    "IC",
    "DC",
    "Insert",
    "Delete",
    "F1",
    "F2",
    "F3",
    "F4",
    "S-F1",
    "C-F1",
    "F5",
    "C-F5",
    "F9",
    "F12",
    "C-c",
    "C-a",
    "C-z",
    "C-Space",
    "C-[",
    "C-?",
    "M-x",
    "M-C-x",
    "M-Enter",
    "a",
    "Z",
]
# tmux 3.3a sends the VT220 keys for Home and End (ESC [ 1 ~, ESC [ 4 ~), mux an
# xterm's (TERM in panes is xterm-256color; programs accept both); tmux types S-Tab as
# text, mux sends back-tab.
DIFFERENT = {"Home": b"\x1b[1~", "End": b"\x1b[4~", "S-Tab": b"S-Tab"}
SEPARATOR = "#SEP#"
RECORDER = """
import os, sys, tty
tty.setraw(0)  # then it says so: keys sent before would meet a cooked terminal
open(sys.argv[2], "w").close()
with open(sys.argv[1], "ab", buffering=0) as out:
    while data := os.read(0, 4096):
        out.write(data)
"""


def test_the_same_bytes_as_tmux_send_keys(tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed; the test command installs it (apt-get)")
    socket, record = tmp_path / "tmux.sock", tmp_path / "keys"
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    ready = tmp_path / "ready"

    def tmux(*args: str) -> None:
        subprocess.run(
            ["tmux", "-u", "-S", str(socket), *args], check=True, timeout=DEFAULT_TIMEOUT
        )

    names = [*NAMES, *DIFFERENT]
    tmux("-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24",
         f"{sys.executable} {script} {record} {ready}")  # fmt: skip
    try:
        wait_for(ready.exists, what="the recorder's terminal in raw mode")
        for name in names:
            tmux("send-keys", "-t", "0", name)
            tmux("send-keys", "-t", "0", "-l", SEPARATOR)

        def pieces() -> list[bytes] | None:
            data = record.read_bytes() if record.exists() else b""
            if data.count(SEPARATOR.encode()) < len(names):
                return None
            return data.split(SEPARATOR.encode())[:-1]

        sent = dict(zip(names, wait_for(pieces, what="every key recorded"), strict=True))
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], check=False)
    for name in NAMES:
        assert key_bytes(name) == sent[name], name
    for name, by_tmux in DIFFERENT.items():
        assert sent[name] == by_tmux, f"tmux now sends {sent[name]!r} for {name}"
        assert key_bytes(name) != by_tmux
