"""A real notification server: dunst under Xvfb on a bus of the test's own. A command
that finished in a detached pane is shown; dunst's default action (dunstctl action)
opens the configured terminal on `muxctl attach ID` (docs/desktop.md#notifications)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.desktop.conftest import recorder_script
from tests.harness import DBusDaemon, Service, wait_for


class Dunst:
    def __init__(self, root: Path) -> None:
        for tool in ("Xvfb", "dunst", "dunstctl"):
            if shutil.which(tool) is None:
                print(f"SKIPPED dunst test: {tool} is not installed")
                pytest.skip(f"{tool} is not installed (apt-get install xvfb dunst)")
        self.bus = DBusDaemon(root)
        display = f":{90 + os.getpid() % 400}"
        self.xvfb = subprocess.Popen(
            ["Xvfb", display, "-screen", "0", "640x480x24", "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": str(root),
            "DISPLAY": display,
            "DBUS_SESSION_BUS_ADDRESS": self.bus.address,
            "XDG_CONFIG_HOME": str(root / "config"),  # no dunstrc of the developer's
        }
        wait_for(lambda: os.path.exists(f"/tmp/.X11-unix/X{display[1:]}"), what="Xvfb to listen")
        self.dunst = subprocess.Popen(
            ["dunst"], env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_for(lambda: self.ctl("is-paused").returncode == 0, what="dunst to answer")

    def ctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["dunstctl", *args], env=self.env, capture_output=True, text=True, check=False
        )

    def shown(self) -> int:
        out = self.ctl("count", "displayed").stdout.strip()
        return int(out) if out.isdigit() else 0

    def close(self) -> None:
        for process in (self.dunst, self.xvfb):
            process.terminate()
            process.wait(timeout=10)
        self.bus.stop()


@pytest.fixture
def dunst(tmp_path: Path) -> Iterator[Dunst]:
    server = Dunst(tmp_path)
    try:
        yield server
    finally:
        server.close()


def test_a_finished_command_shows_in_dunst_and_its_action_attaches(
    tmp_path: Path, dunst: Dunst
) -> None:
    terminal, record = recorder_script(tmp_path)
    root = tmp_path / "mux"
    root.mkdir()
    config = f"notify_command_seconds = 0.5\nterminal_command = [{json.dumps(str(terminal))}]\n"
    service = Service(root, bus_address=dunst.bus.address, config=config).start()
    try:
        pane = service.spawn(shell="bash", title="build", env={"PS1": "mux$ "})
        wait_for(lambda: service.panes()[pane]["shell_state"] == "prompt", what="a prompt")
        service.call("SendInput", "tay", [pane, b"sleep 1\r"])
        wait_for(lambda: dunst.shown() == 1, what="dunst to show the notification")
        dunst.ctl("action", "0")
        argv = wait_for(
            lambda: record.exists() and record.read_text().split("\n"), what="the terminal"
        )
        assert argv[-3:] == ["attach", str(pane), ""], argv
    finally:
        service.stop()
