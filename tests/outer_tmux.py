"""A real tmux server playing the user's terminal, for tests of `muxctl attach`.

Each window runs one shell command line; keys go in with `send-keys`, and
what the "terminal" shows comes back with `capture-pane`.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import DEFAULT_TIMEOUT, Service, wait_for


class OuterTmux:
    def __init__(self, root: Path, service: Service) -> None:
        if shutil.which("tmux") is None:
            pytest.fail("tmux is not installed; the test command installs it (apt-get)")
        self.socket = root / "outer-tmux.sock"
        self.service = service
        self._windows = 0

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            ["tmux", "-u", "-S", str(self.socket), *args],  # -u: a UTF-8 terminal, as a user's
            capture_output=True,
            text=True,
            env=self.service.env,
            timeout=DEFAULT_TIMEOUT,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {result.stderr}")
        return result

    def muxctl_line(self, *args: str, record: Path | None = None) -> str:
        """A shell command line running muxctl, then saying how it ended and whether the
        terminal was left in its normal (canonical, echoing) mode; also into `record`
        (for a terminal whose screen something else may flood afterwards)."""
        command = shlex.join([sys.executable, "-m", "muxctl", *args])
        modes = "stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)' | tr '\\n' ' '"
        keep = ""
        if record is not None:
            keep = f"{{ echo STATUS=$status; {modes}; }} > {shlex.quote(str(record))}; "
        return f"{command}; status=$?; echo STATUS=$status; {keep}{modes}; echo; exec sleep 600"

    def open(self, command_line: str, rows: int = 30, cols: int = 100) -> str:
        """A new terminal running `command_line`; returns its tmux target."""
        # One tmux session per terminal: each keeps its own size. (tmux 3.3a
        # crashes on new-window once window-size is manual.)
        self._windows += 1
        name = f"term{self._windows}"
        self.tmux("new-session", "-d", "-s", name, "-x", str(cols), "-y", str(rows), command_line)
        return f"{name}:"

    def resize(self, target: str, rows: int, cols: int) -> None:
        self.tmux("resize-window", "-t", target, "-x", str(cols), "-y", str(rows))

    def send_keys(self, target: str, *keys: str) -> None:
        self.tmux("send-keys", "-t", target, *keys)

    def type_line(self, target: str, text: str) -> None:
        self.tmux("send-keys", "-t", target, "-l", text)
        self.tmux("send-keys", "-t", target, "Enter")

    def capture(self, target: str) -> str:
        return self.tmux("capture-pane", "-p", "-t", target).stdout

    def wait_shown(self, target: str, needle: str, timeout: float = DEFAULT_TIMEOUT) -> str:
        def shown() -> str:
            text = self.capture(target)
            return text if needle in text else ""  # ("": not yet)

        try:
            return wait_for(shown, timeout, f"{needle!r} in the outer terminal")
        except AssertionError as e:
            raise AssertionError(
                f"{e}\nthe terminal shows:\n{self.capture(target)}\n"
                f"muxd's log ends:\n{self.service.log()[-1500:]}"
            ) from None

    def pane_pid(self, target: str) -> int:
        return int(self.tmux("display-message", "-p", "-t", target, "#{pane_pid}").stdout)

    def kill(self) -> None:
        self.tmux("kill-server", check=False)
