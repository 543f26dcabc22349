"""sd_notify messages, received on a real datagram socket."""

import asyncio
import os
import socket
from pathlib import Path

from mux.system.notify import Supervisor


def test_messages_and_watchdog(tmp_path: Path) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(tmp_path / "notify"))
    listener.settimeout(5)
    env = {
        "NOTIFY_SOCKET": str(tmp_path / "notify"),
        "WATCHDOG_USEC": "200000",
        "WATCHDOG_PID": str(os.getpid()),
    }
    supervisor = Supervisor(env)
    assert supervisor.active
    assert supervisor.watchdog_interval == 0.1
    supervisor.ready("0 panes")
    assert listener.recv(100) == b"READY=1\nSTATUS=0 panes"
    supervisor.status("1 pane")
    supervisor.status("1 pane")  # unchanged: not sent again
    supervisor.extend_timeout(2.5)
    assert listener.recv(100) == b"STATUS=1 pane"
    assert listener.recv(100) == b"EXTEND_TIMEOUT_USEC=2500000"

    async def watchdog_fed_twice() -> list[bytes]:
        loop = asyncio.get_running_loop()
        listener.setblocking(False)
        supervisor.start_watchdog(loop)
        try:  # the loop keeps feeding it: wait for two feeds, with a deadline
            return [await asyncio.wait_for(loop.sock_recv(listener, 100), 5) for _ in range(2)]
        finally:
            supervisor.stop_watchdog()
            listener.setblocking(True)

    assert asyncio.run(watchdog_fed_twice()) == [b"WATCHDOG=1", b"WATCHDOG=1"]
    supervisor.stopping()
    assert listener.recv(100) == b"STOPPING=1"


def test_no_supervisor_and_a_watchdog_for_someone_else() -> None:
    assert not Supervisor({}).active
    Supervisor({}).ready()  # does nothing, raises nothing
    other = Supervisor({"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "1"})
    assert other.watchdog_interval is None
