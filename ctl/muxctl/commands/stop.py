"""muxctl stop: stop the service the way it runs (docs/muxctl.md#stop).

Where systemd runs it (the muxd that owns the bus name is mux.service's main
process), `systemctl --user stop mux.service`: systemd then knows it stopped on
purpose and does not restart it. Anything else (autostarted by muxctl, launchd,
by hand) gets SIGTERM. Either way it is a clean stop: the final snapshot, every
pane hung up. muxctl waits until that muxd is gone.
"""

import argparse
import contextlib
import sys
import time
from typing import TYPE_CHECKING

from muxctl.commands.command import ServiceCommand
from muxctl.errors import EXIT_FAILURE, CtlError
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient
    from muxctl.errors import NotRunning

STOP_SECONDS = 30.0


def report_not_running(args: argparse.Namespace, error: "NotRunning") -> int:
    if args.json:
        print_json({"stopped": False, "running": False})
    else:
        print("mux is not running")
    return 0


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    import os
    import signal

    from muxctl.systemd_user import manager_reachable, systemctl

    pid = _owner_pid(client)
    client.close()
    under_systemd = manager_reachable() and (
        systemctl("show", "-p", "MainPID", "--value", "mux.service").stdout.strip() == str(pid)
    )
    if under_systemd:
        result = systemctl("stop", "mux.service")
        if result.returncode != 0:
            raise CtlError(f"systemctl --user stop mux.service failed: {result.stderr.strip()}")
        how = "systemctl --user stop mux.service"
    else:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        how = f"SIGTERM to muxd (pid {pid})"
    if not _gone(pid, time.monotonic() + STOP_SECONDS):
        raise CtlError(f"muxd (pid {pid}) did not stop within 30 s", EXIT_FAILURE)
    if args.json:
        print_json({"stopped": True, "pid": pid, "how": "systemd" if under_systemd else "signal"})
    else:
        print(f"mux stopped ({how}); its panes were closed and the session saved")
    return 0


def _owner_pid(client: "MuxClient") -> int:
    """The pid of the muxd that owns the bus name, after checking it is this user's."""
    import os

    from mux.protocol.names import BUS_NAME

    if client.ask_bus("GetConnectionUnixUser", "s", [BUS_NAME]) != os.getuid():
        raise CtlError(f"the owner of {BUS_NAME} is another user's process; not stopping it")
    return int(client.ask_bus("GetConnectionUnixProcessID", "s", [BUS_NAME]))


def _gone(pid: int, deadline: float) -> bool:
    """Whether `pid` ends before `deadline` (a zombie has ended: its parent reaps it)."""
    import os

    from mux.system.proctree import start_ticks

    while time.monotonic() < deadline:
        if sys.platform == "linux":
            if start_ticks(pid) is None:
                return True
        else:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
        time.sleep(0.02)
    return False


COMMAND = ServiceCommand(
    name="stop",
    help="stop mux the way it runs (systemctl --user stop mux, else SIGTERM): panes close",
    run=run,
    starts_service=False,
    report_not_running=report_not_running,
)
