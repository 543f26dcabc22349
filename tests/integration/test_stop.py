"""muxctl stop (docs/muxctl.md#stop): a clean stop of the muxd that serves, whoever
started it; nothing to do when none runs."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from tests.harness import Service, pid_alive, wait_for


def test_stop_ends_a_muxd_cleanly(tmp_root: Path) -> None:
    service = Service(tmp_root, bus_address=None).start()
    try:
        pane = service.spawn(["sleep", "600"], title="kept")
        pid = service.panes()[pane]["pid"]
        result = service.muxctl("stop", "--json", check=True)
        stopped = json.loads(result.stdout)
        assert stopped == {"how": "signal", "pid": service.process.pid, "stopped": True}
        assert service.process.wait(timeout=10) == 0, "a clean stop"
        wait_for(lambda: not pid_alive(pid), what="the pane's program to be hung up")
        assert '"kept"' in (service.state / "mux" / "session.json").read_text()
        assert not (service.runtime / "bus").exists(), "its private bus is stopped too"
        again = service.muxctl("stop")
        assert again.returncode == 0 and again.stdout.strip() == "mux is not running"
        assert service.background_muxd() == [], "stop starts nothing"
    finally:
        service.stop()


def test_a_stop_asked_while_muxd_starts_is_a_clean_stop(tmp_root: Path) -> None:
    """SIGTERM between muxd starting its private bus (and restoring panes) and serving:
    muxd finishes its start and then stops as at any other time, its bus and panes with
    it. (It used to die of the signal there, leaving its dbus-daemon running for good:
    seen as a leftover process after concurrent first uses.)"""
    service = Service(tmp_root, bus_address=None).start()
    try:
        service.spawn(["sleep", "600"], title="kept")
        assert service.stop() == 0
        service.start(wait=False)
        # Polled without a pause: muxd is between its bus and serving for milliseconds.
        bus, deadline = service.runtime / "bus", time.monotonic() + 30
        while not bus.exists():
            assert time.monotonic() < deadline, "the private bus did not start"
        service.process.send_signal(signal.SIGTERM)
        assert service.process.wait(timeout=30) == 0, f"not a clean stop:\n{service.log()}"
        wait_for(lambda: not service.own_processes(), what="its bus and panes to end with it")
        assert '"kept"' in (service.state / "mux" / "session.json").read_text(), "nothing lost"
    finally:
        service.stop()
        service.stop_background()  # (what a muxd that died of the signal left)
