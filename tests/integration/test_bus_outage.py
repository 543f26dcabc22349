"""Losing the bus is an outage, not a stop (docs/systemd.md#bus-outages): the panes go on,
their output is read, and mux is back on the bus with the same ids and token."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from dbus_fast import Variant

from tests.harness import DBusDaemon, Service, pid_alive, process_cmdline, wait_for

COUNTER = "i=0; while :; do i=$((i+1)); echo count-$i; sleep 0.05; done"


def private_bus_pid(svc: Service) -> int:
    assert svc.process is not None
    muxd = svc.process.pid
    children = Path(f"/proc/{muxd}/task/{muxd}/children").read_text().split()
    (bus,) = [int(pid) for pid in children if "dbus-daemon" in " ".join(process_cmdline(int(pid)))]
    return bus


def token_of(svc: Service) -> bytes:
    """The instance token, from a bound spawn (then closed again)."""
    pane, token, _ = svc.call(
        "Spawn", "a{sv}", [{"argv": Variant("as", ["true"]), "bind_instance": Variant("b", True)}]
    )
    svc.call("Kill", "t", [pane])
    return bytes(token)


def last_count(svc: Service, pane: int) -> int:
    counts = [line for line in svc.screen(pane) if line.startswith("count-")]
    return int(counts[-1].removeprefix("count-")) if counts else 0


def answers(svc: Service) -> dict[int, dict[str, object]] | None:
    try:
        return svc.panes()
    except Exception:
        return None


def test_a_killed_private_bus_is_started_again_and_nothing_is_lost(
    private_service: Service,
) -> None:
    svc = private_service
    counter = svc.spawn(["sh", "-c", COUNTER], title="counter")
    quiet = svc.spawn(["sleep", "600"])
    token = token_of(svc)
    before = svc.panes()
    for round_ in range(5):
        bus = private_bus_pid(svc)
        os.kill(bus, signal.SIGKILL)
        wait_for(lambda b=bus: not pid_alive(b), what="the bus daemon to die")
        seen = last_count(svc, counter) if round_ else 0
        after = wait_for(lambda: answers(svc), timeout=10, what="mux on its bus again")
        assert after == before
        assert private_bus_pid(svc) != bus, "a new dbus-daemon"
        assert token_of(svc) == token
        # Output went on being read: the counter's screen moves on.
        wait_for(lambda s=seen: last_count(svc, counter) > s + 5, what="the counter to go on")
        assert svc.process is not None and svc.process.poll() is None
    assert before[quiet]["state"] == "running" and pid_alive(int(before[quiet]["pid"]))
    # An independent client sees it too.
    listed = svc.busctl(
        "call", "org.mux.Mux1", "/org/mux/Mux1", "org.mux.Mux1.Manager", "ListPanes"
    ).stdout
    assert "counter" in listed
    assert "reconnecting" in svc.log() and "on the private bus again" in svc.log()
    out = svc.muxctl("ls", check=True).stdout
    assert "counter" in out


def test_a_session_bus_that_goes_away_and_comes_back(tmp_root: Path) -> None:
    bus = DBusDaemon(tmp_root)
    svc = Service(tmp_root, bus_address=bus.address).start()
    try:
        pane = svc.spawn(["sleep", "600"], title="survivor")
        token = token_of(svc)
        before = svc.panes()
        bus.process.kill()
        bus.process.wait(timeout=10)
        wait_for(
            lambda: "waiting for the external bus" in svc.log() or "reconnecting" in svc.log(),
            what="muxd to notice",
        )
        # While it is gone: the panes go on, and muxctl says what is happening.
        outage = svc.muxctl("ls")
        assert outage.returncode != 0
        assert "mux is reconnecting to its bus" in outage.stderr, outage.stderr
        assert pid_alive(int(before[pane]["pid"]))
        assert svc.process is not None and svc.process.poll() is None

        bus.socket_path.unlink(missing_ok=True)
        bus = DBusDaemon(tmp_root)  # the same address
        after = wait_for(lambda: answers(svc), timeout=10, what="mux on the new bus")
        assert after == before
        assert token_of(svc) == token
        assert "survivor" in svc.muxctl("ls", check=True).stdout
    finally:
        svc.stop()
        bus.stop()


def test_a_bus_that_never_comes_back_never_ends_the_panes(tmp_root: Path) -> None:
    bus = DBusDaemon(tmp_root)
    svc = Service(tmp_root, bus_address=bus.address).start()
    try:
        pane = svc.spawn(["sleep", "600"])
        pid = int(svc.panes()[pane]["pid"])
        bus.process.kill()
        bus.process.wait(timeout=10)
        wait_for(lambda: "still no bus" in svc.log(), what="a failed reconnection")
        assert pid_alive(pid)
        assert svc.process is not None and svc.process.poll() is None
        # A stop still closes everything, bus or not.
        assert svc.stop() == 0, svc.log()[-2000:]
        wait_for(lambda: not pid_alive(pid), what="the pane's program to be hung up")
    finally:
        svc.stop()
        bus.stop()
