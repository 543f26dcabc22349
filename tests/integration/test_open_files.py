"""The open-files limit (mux.system.open_files): muxd started with a low soft limit,
as a service manager starts it (systemd: 1024, launchd: 256), holds more panes than
that limit would allow, and the programs it starts still get the limit it was given,
across an upgrade too."""

import resource
from pathlib import Path

from tests.harness import DBusDaemon, Service, wait_for

SOFT = 256  # two fds a pane (terminal, pidfd): without raising, ~120 panes


def limits_of(pid: int) -> tuple[int, int]:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError("no open-files line in /proc/PID/limits")


def program_limits(service: Service) -> str:
    """What a new pane's program says its limit is, once asked (after Spawn's reply:
    its first instants may still see muxd's, mux.panes.process)."""
    pane = service.spawn(
        ["sh", "-c", 'read x; echo "limits $(ulimit -Sn):$(ulimit -Hn)"; exec sleep 600']
    )
    service.call("SendInput", "tay", [pane, b"\r"])
    return service.wait_screen(pane, "limits ")


def test_many_panes_under_a_low_limit_and_programs_keep_it(
    dbus_daemon: DBusDaemon, tmp_root: Path
) -> None:
    hard = min(resource.getrlimit(resource.RLIMIT_NOFILE)[1], 4096)
    assert hard > 3 * SOFT, "the test needs a hard limit above 768"
    service = Service(
        tmp_root,
        bus_address=dbus_daemon.address,
        argv_prefix=["prlimit", f"--nofile={SOFT}:{hard}", "--"],
    ).start()
    try:
        assert service.process is not None
        assert limits_of(service.process.pid) == (hard, hard)
        panes = [service.spawn(["sleep", "600"]) for _ in range(SOFT)]
        assert len(service.panes()) == len(panes)
        assert f"limits {SOFT}:{hard}" in program_limits(service)

        service.muxctl("upgrade", check=True)
        wait_for(lambda: len(service.panes()) == len(panes) + 1, what="the panes after upgrade")
        assert f"limits {SOFT}:{hard}" in program_limits(service)
    finally:
        service.stop()
