"""The lifecycle's edges that only a real muxd shows."""

import re
import shutil
from pathlib import Path

from tests.harness import DBusDaemon, Service, wait_for


def test_a_lost_bus_connection_is_logged_with_its_reason(tmp_root: Path) -> None:
    """The log says why the connection ended, not only that it did."""
    bus = DBusDaemon(tmp_root)
    service = Service(tmp_root, bus_address=bus.address).start()
    try:
        service.spawn(["sleep", "60"])
        bus.process.kill()  # the bus daemon dies under muxd
        bus.process.wait(timeout=10)
        line = wait_for(
            lambda: re.search(r"lost the connection to the bus.*", service.log()),
            what="the loss in the log",
        )
        assert re.fullmatch(r"lost the connection to the bus \(.+\); reconnecting", line.group(0))
    finally:
        service.stop()
        bus.stop()


def test_restore_problems_survive_an_upgrade(tmp_root: Path) -> None:
    """A pane that could not be restored stays listed, and kept in the snapshot for
    repair, after `Upgrade`: the new muxd learns it from the old one."""
    svc = Service(tmp_root, bus_address=None).start()
    program = tmp_root / "vanishing"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
    try:
        svc.spawn([str(program), "600"])
        assert svc.stop() == 0
        program.unlink()
        svc.start()
        (before,) = svc.call("ListRestoreProblems")
        assert len(before) == 1
        holder = svc.panes()

        svc.muxctl("upgrade", check=True)

        (after,) = svc.call("ListRestoreProblems")
        assert [{k: v.value for k, v in p.items()} for p in after] == [
            {k: v.value for k, v in p.items()} for p in before
        ]
        assert svc.panes() == holder, "its place holder too"
        path, _ = svc.call("Snapshot")
        assert str(program) in Path(path).read_text(), "still kept in the snapshot"
        # Given up after the upgrade: the new muxd knows which pane held its place.
        (pane_id,) = holder
        svc.call("Kill", "t", [pane_id])
        (after,) = svc.call("ListRestoreProblems")
        assert after == []
        path, _ = svc.call("Snapshot")
        assert str(program) not in Path(path).read_text()
    finally:
        svc.stop()
