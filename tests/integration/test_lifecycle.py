"""The lifecycle's edges that only a real muxd shows."""

import re
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
        assert service.process is not None
        wait_for(lambda: service.process.poll() is not None, what="muxd to stop")  # type: ignore[union-attr]
        line = re.search(r"lost the connection to the bus.*", service.log())
        assert line is not None, service.log()
        assert re.fullmatch(r"lost the connection to the bus \(.+\); stopping", line.group(0))
    finally:
        service.stop()
        bus.stop()
