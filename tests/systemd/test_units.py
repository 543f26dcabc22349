"""mux under a real systemd --user: install, activation, readiness, status, stop, restart."""

from __future__ import annotations

import json
import os
import signal
import socket
from pathlib import Path

from mux.protocol import attach as attach_protocol
from tests.harness import pid_alive, wait_for
from tests.systemd.conftest import UserSystemd


def installed(sd: UserSystemd, *flags: str) -> None:
    result = sd.muxctl("install", *flags)
    assert result.returncode == 0, result.stderr
    assert "daemon-reload" in result.stdout


def test_install_writes_units_that_verify(user_systemd: UserSystemd) -> None:
    installed(user_systemd)
    unit_dir = user_systemd.home / ".config" / "systemd" / "user"
    assert (unit_dir / "mux.service").is_file()
    assert (unit_dir / "mux.socket").is_file()
    dbus = user_systemd.home / ".local/share/dbus-1/services/org.mux.Mux1.service"
    assert "SystemdService=mux.service" in dbus.read_text()
    user_systemd.verify(unit_dir / "mux.service", unit_dir / "mux.socket")
    assert user_systemd.show("mux.service", "Type") == "notify"
    again = user_systemd.muxctl("install")
    assert "unchanged" in again.stdout, "installing twice changes nothing"


def test_shipped_units_verify(user_systemd: UserSystemd, tmp_path: Path) -> None:
    """units/ as a package installs them (paths rewritten to programs that exist here)."""
    root = Path(__file__).resolve().parents[2] / "units"
    for name in ("mux.service", "mux.socket"):
        text = (root / name).read_text().replace("/usr/bin/muxd", "/bin/true")
        (tmp_path / name).write_text(text.replace("/usr/bin/muxctl", "/bin/true"))
    user_systemd.verify(tmp_path / "mux.service", tmp_path / "mux.socket")


def test_socket_activation_and_readiness(user_systemd: UserSystemd) -> None:
    sd = user_systemd
    installed(sd, "--now")
    sd.wait_state("mux.socket", "active")
    assert sd.show("mux.service", "ActiveState") == "inactive"
    sock_path = sd.runtime / "mux" / "mux.sock"
    assert (sock_path.stat().st_mode & 0o777) == 0o600
    assert ((sd.runtime / "mux").stat().st_mode & 0o777) == 0o700
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(30)
        client.connect(str(sock_path))
        # The answer comes from muxd itself: it was started and given this socket.
        client.sendall(attach_protocol.encode(attach_protocol.Hello()))
        decoder = attach_protocol.FrameDecoder()
        decoder.receive_data(client.recv(200))
        assert decoder.next_frame() == attach_protocol.Welcome(paste=True)
    sd.wait_state("mux.service", "active")
    assert "0 panes" in sd.show("mux.service", "StatusText")
    assert sd.show("mux.service", "NRestarts") == "0"


def test_dbus_activation_status_and_clean_stop(user_systemd: UserSystemd) -> None:
    sd = user_systemd
    installed(sd)
    assert sd.show("mux.service", "ActiveState") == "inactive"
    # A plain method call from an independent client starts it through the bus.
    out = sd.busctl(
        "call",
        "org.mux.Mux1",
        "/org/mux/Mux1",
        "org.mux.Mux1.Manager",
        "Spawn",
        "a{sv}",
        "1",
        "argv",
        "as",
        "2",
        "sleep",
        "1000",
    )
    assert out.returncode == 0, out.stderr + sd.journal()[-2000:]
    sd.wait_state("mux.service", "active")
    wait_for(lambda: "1 pane" in sd.show("mux.service", "StatusText"), what="StatusText")
    pane_pid = int(sd.muxctl("ls", "--json").stdout.split('"pid":')[1].split(",")[0])
    assert pid_alive(pane_pid)
    sd.systemctl("stop", "mux.service")
    assert sd.show("mux.service", "Result") == "success"
    assert sd.show("mux.service", "ActiveState") == "inactive"
    wait_for(lambda: not pid_alive(pane_pid), what="the pane to end with the service")


def test_type_notify_waits_for_ready(user_systemd: UserSystemd) -> None:
    """The unit stays 'activating' until muxd says READY=1: here muxd is held stopped
    (SIGSTOP) before it can start, so it cannot be ready."""
    sd = user_systemd
    installed(sd)
    dropin = sd.home / ".config/systemd/user/mux.service.d"
    dropin.mkdir(parents=True)
    start = sd.show("mux.service", "ExecStart").split("argv[]=")[1].split(" ;")[0]
    (dropin / "hold.conf").write_text(
        f"[Service]\nExecStart=\nExecStart=/bin/sh -c 'kill -STOP $$$$; exec {start}'\n"
    )
    sd.systemctl("daemon-reload")
    sd.systemctl("start", "--no-block", "mux.service")
    wait_for(lambda: sd.main_pid() != 0, what="a main pid")
    held = sd.main_pid()
    wait_for(lambda: _stopped(held), what="the held process to stop itself")
    assert sd.show("mux.service", "ActiveState") == "activating"
    os.kill(held, signal.SIGCONT)
    sd.wait_state("mux.service", "active")
    assert sd.main_pid() == held, "READY came from muxd, exec'd in the same process"


def _stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "T"


def test_killed_service_is_restarted(user_systemd: UserSystemd) -> None:
    sd = user_systemd
    installed(sd, "--now")
    assert sd.muxctl("where").returncode == 0  # activates it through the bus
    sd.wait_state("mux.service", "active")
    first = sd.main_pid()
    os.kill(first, signal.SIGKILL)
    wait_for(
        lambda: (
            sd.main_pid() not in (0, first) and sd.show("mux.service", "ActiveState") == "active"
        ),
        what="the restart",
    )
    assert sd.show("mux.service", "NRestarts") == "1"
    assert sd.muxctl("status").returncode == 0


def test_watchdog_restarts_a_stalled_service(user_systemd: UserSystemd) -> None:
    sd = user_systemd
    installed(sd)
    dropin = sd.home / ".config/systemd/user/mux.service.d"
    dropin.mkdir(parents=True)
    (dropin / "watchdog.conf").write_text("[Service]\nWatchdogSec=1\nTimeoutAbortSec=2\n")
    sd.systemctl("daemon-reload")
    sd.systemctl("start", "mux.service")
    stalled = sd.main_pid()
    # A healthy muxd feeds the watchdog (systemd records each ping): three periods
    # of pings later it is still the same process.
    first_ping = int(sd.show("mux.service", "WatchdogTimestampMonotonic"))
    wait_for(
        lambda: int(sd.show("mux.service", "WatchdogTimestampMonotonic")) >= first_ping + 3_000_000,
        timeout=15,
        what="three watchdog periods of pings",
    )
    assert sd.main_pid() == stalled and sd.show("mux.service", "NRestarts") == "0"
    # A stopped process cannot feed the watchdog, just like a stuck event loop.
    os.kill(stalled, signal.SIGSTOP)
    wait_for(
        lambda: (
            sd.main_pid() not in (0, stalled) and sd.show("mux.service", "ActiveState") == "active"
        ),
        timeout=40,
        what="the watchdog to restart mux",
    )
    # Nothing but the watchdog acts on a stopped process: it was killed and replaced.
    assert sd.show("mux.service", "NRestarts") == "1"
    wait_for(lambda: not pid_alive(stalled), what="the stalled muxd to be gone")


def test_reload_is_a_graceful_upgrade(user_systemd: UserSystemd) -> None:
    sd = user_systemd
    installed(sd, "--now")
    first = sd.muxctl("spawn", "--", "sh", "-c", "echo before-reload; exec sleep 600")
    assert first.returncode == 0, first.stderr
    sd.wait_state("mux.service", "active")
    main_pid = sd.main_pid()
    pane_pid = int(sd.muxctl("ls", "--json").stdout.split('"pid":')[1].split(",")[0])
    sd.systemctl("reload", "mux.service")
    assert sd.show("mux.service", "ActiveState") == "active"
    assert sd.main_pid() == main_pid, "the same process, re-executed"
    cmdline = Path(f"/proc/{main_pid}/cmdline").read_bytes().split(b"\0")
    assert b"--resume-from" in cmdline, "an exec happened: it runs as the resumed program"
    outcome = json.loads((sd.runtime / "mux" / "upgrade.json").read_text())
    assert (outcome["generation"], outcome["error"]) == (1, "")
    assert pid_alive(pane_pid)
    assert "before-reload" in sd.muxctl("capture", "1").stdout
    second = sd.muxctl("spawn", "--", "true")
    assert second.stdout.strip() == "2", (
        "ids continue upward",
        sd.show("mux.service", "NRestarts"),
        sd.main_pid(),
        main_pid,
        sd.muxctl("where").stdout,
        sd.systemctl("status", "mux.service", check=False).stdout,
    )
    assert sd.show("mux.service", "NRestarts") == "0"
    wait_for(lambda: "2 panes" in sd.show("mux.service", "StatusText"), what="StatusText")


def test_doctor_reports_what_is_installed_and_running(user_systemd: UserSystemd) -> None:
    sd = user_systemd
    installed(sd, "--now", "--enable")
    assert sd.muxctl("where").returncode == 0
    report = sd.muxctl("doctor", "--json")
    assert report.returncode == 0, report.stdout + report.stderr
    findings = {f["check"]: f for f in json.loads(report.stdout)}
    assert findings["mux.service"]["status"] == "ok"
    assert findings["mux.service"]["detail"] == "active, enabled"
    assert findings["mux.socket"]["detail"] == "active, enabled"
    assert findings["service"]["detail"].startswith("mux ")
    assert findings["bus"]["detail"].startswith("the ")
    # A unit that names an interpreter that is gone is a failure, with the fix.
    unit = sd.home / ".config/systemd/user/mux.service"
    unit.write_text(unit.read_text().replace("ExecStart=", "ExecStart=/nonexistent/python "))
    broken = sd.muxctl("doctor")
    assert broken.returncode == 1
    assert "fail  mux.service" in broken.stdout
    assert "fix: muxctl install" in broken.stdout


def test_systemctl_start_mux_after_install(user_systemd: UserSystemd) -> None:
    """docs/systemd.md: `systemctl --user start mux` works once the units are installed, and
    (Type=notify) returns only once muxd is ready: its name is already owned."""
    installed(user_systemd)
    user_systemd.systemctl("start", "mux")
    owned = user_systemd.busctl(
        "call",
        "org.freedesktop.DBus",
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus",
        "NameHasOwner",
        "s",
        "org.mux.Mux1",
    )
    assert owned.stdout.strip() == "b true", "READY=1 came after the bus name was owned"
    assert user_systemd.show("mux.service", "ActiveState") == "active"
    assert user_systemd.show("mux.socket", "ActiveState") == "active", "the socket comes along"
    status = user_systemd.muxctl("status")
    assert status.returncode == 0 and "running on the" in status.stdout


def test_a_restart_brings_the_panes_back(user_systemd: UserSystemd) -> None:
    """Stop and start under systemd (the login path): the final snapshot at stop, the
    restore at start."""
    sd = user_systemd
    installed(sd, "--now")
    for n in range(3):
        assert sd.muxctl("spawn", "--title", f"t{n}", "--", "sleep", f"{700 + n}").returncode == 0
    sd.systemctl("restart", "mux.service")
    listed = json.loads(sd.muxctl("ls", "--json").stdout)
    assert sorted(p["title"] for p in listed) == ["t0", "t1", "t2"]
    assert all(p["state"] == "running" for p in listed)
    assert sd.show("mux.service", "NRestarts") == "0", "a clean restart, not a crash"


def test_a_restarted_user_bus_is_an_outage_not_a_stop(user_systemd: UserSystemd) -> None:
    """docs/systemd.md#bus-outages: the same muxd, panes and pids, back on the new bus."""
    sd = user_systemd
    installed(sd, "--now")
    assert sd.muxctl("spawn", "--title", "survivor", "--", "sleep", "800").returncode == 0
    sd.wait_state("mux.service", "active")
    muxd = sd.main_pid()
    before = json.loads(sd.muxctl("ls", "--json").stdout)
    status = sd.show("mux.service", "StatusText")
    assert status.startswith("1 pane; ")
    for _ in range(2):
        sd.systemctl("restart", "dbus.service")
        after = wait_for(
            lambda: (out := sd.muxctl("ls", "--json")).returncode == 0 and json.loads(out.stdout),
            what="muxctl to answer",
        )
        assert after == before
        assert sd.main_pid() == muxd, "the same muxd: an outage, not a restart"
        assert sd.show("mux.service", "ActiveState") == "active"
        wait_for(
            lambda: sd.show("mux.service", "StatusText") == status,
            what="the status without the outage",
        )
    assert sd.show("mux.service", "NRestarts") == "0"


def test_stop_under_systemd_is_systemctl_stop(user_systemd: UserSystemd) -> None:
    """docs/muxctl.md#stop: systemd stops it, knows it was on purpose, restarts nothing."""
    sd = user_systemd
    installed(sd, "--now")
    assert sd.muxctl("spawn", "--", "sleep", "600").returncode == 0
    result = sd.muxctl("stop")
    assert result.returncode == 0, result.stderr
    assert "systemctl --user stop mux.service" in result.stdout
    assert sd.show("mux.service", "ActiveState") == "inactive"
    assert sd.show("mux.service", "NRestarts") == "0"
    assert sd.show("mux.socket", "ActiveState") == "active", "the next use starts it again"
