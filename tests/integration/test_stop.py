"""muxctl stop (docs/muxctl.md#stop): a clean stop of the muxd that serves, whoever
started it; nothing to do when none runs."""

from __future__ import annotations

import json
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
