"""The processes in panes: exit statuses, signals, terminals, environment, descriptors,
reaping, and what happens to them when panes are killed and when muxd stops.

Everything is checked on the real processes, through /proc.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from mux.system.muxd_command import muxd_argv
from muxctl.client import connect
from muxctl.errors import RemoteError
from tests.harness import BusMonitor, Service, pid_alive, wait_for, wait_gone

ROOT = "/org/mux/Mux1"
MANAGER = "org.mux.Mux1.Manager"
PANE = "org.mux.Mux1.Pane"
PROPERTIES = "org.freedesktop.DBus.Properties"

# What systemd hands a service about itself; none of it may reach a pane (tmux#4035).
SUPERVISOR_VARIABLES = (
    "LISTEN_FDS",
    "LISTEN_PID",
    "LISTEN_FDNAMES",
    "NOTIFY_SOCKET",
    "WATCHDOG_USEC",
    "WATCHDOG_PID",
)

PTS_MAJOR = 136  # Unix98 pseudo-terminal slaves, /dev/pts/N (Linux)


def pane_path(pane_id: int) -> str:
    return f"{ROOT}/pane/{pane_id}"


class ProcStat:
    """The fields of /proc/<pid>/stat that say where a process stands (proc(5))."""

    def __init__(self, pid: int) -> None:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        self.state = fields[0]
        self.ppid = int(fields[1])
        self.pgrp = int(fields[2])
        self.session = int(fields[3])
        self.tty_nr = int(fields[4])
        self.tpgid = int(fields[5])


def environ_of(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as f:
        entries = f.read().split(b"\0")
    return dict(e.decode().split("=", 1) for e in entries if e)


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if ProcStat(int(entry)).ppid == pid:
                    found.append(int(entry))
            except (FileNotFoundError, ProcessLookupError):
                continue
    return found


def comm_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except FileNotFoundError:
        return ""


def is_reaped(pid: int) -> bool:
    """The process is gone entirely: not running, and not a zombie waiting for its parent."""
    return not os.path.exists(f"/proc/{pid}")


def pane_pid(service: Service, pane_id: int) -> int:
    return int(service.panes()[pane_id]["pid"])


def send_text(service: Service, pane_id: int, text: str) -> None:
    service.call("SendInput", "tay", [pane_id, text.encode()])


# -- exit statuses and the signals announcing them --------------------------------------


def test_exit_status_of_a_normal_exit(service: Service) -> None:
    pane_id = service.spawn(["sh", "-c", "echo leaving; exit 7"])
    pane = service.wait_exited(pane_id)
    assert pane["state"] == "exited"
    assert pane["exit_status"] == 7
    assert "leaving" in service.screen_text(pane_id), "output before the exit is kept"
    words = service.busctl(
        "get-property", "org.mux.Mux1", pane_path(pane_id), PANE, "State", "ExitStatus"
    ).stdout.split()
    assert words == ["s", '"exited"', "i", "7"]
    # Reaped before the pane says it has exited: not even a zombie is left.
    assert is_reaped(pane["pid"])


def test_exit_status_of_a_signal_death(service: Service) -> None:
    by_itself = service.spawn(["sh", "-c", "kill -USR2 $$"])
    by_api = service.spawn(["sleep", "60"])
    service.call("Signal", "ts", [by_api, "KILL"])
    assert service.wait_exited(by_itself)["exit_status"] == -signal.SIGUSR2
    assert service.wait_exited(by_api)["exit_status"] == -signal.SIGKILL


def test_pane_exited_and_properties_changed_signals(service: Service) -> None:
    with BusMonitor(service.bus_address) as monitor:
        pane_id = service.spawn(["sh", "-c", "read _; exit 3"])
        # Nothing is announced while the program runs.
        assert monitor.signals("PaneExited") == []
        send_text(service, pane_id, "\n")
        exited = monitor.wait_signal("PaneExited", lambda m: m.body[0] == pane_id)
        assert exited.path == ROOT
        assert exited.interface == MANAGER
        assert exited.signature == "ti"
        assert exited.body == [pane_id, 3]
        changed = monitor.wait_signal(
            "PropertiesChanged",
            lambda m: "State" in m.body[1],
            interface=PROPERTIES,
            path=pane_path(pane_id),
        )
        assert changed.body[0] == PANE
        assert changed.body[1]["State"].value == "exited"
        assert changed.body[1]["ExitStatus"].value == 3

        killed = service.spawn(["sleep", "60"])
        service.call("Signal", "ts", [killed, "TERM"])
        exited = monitor.wait_signal("PaneExited", lambda m: m.body[0] == killed)
        assert exited.body == [killed, -signal.SIGTERM]
        assert len(monitor.signals("PaneExited")) == 2, "one PaneExited per pane"


# -- signals reach the foreground process group --------------------------------------------


def test_signal_reaches_a_trapping_shell(service: Service) -> None:
    script = "trap 'echo got-usr1' USR1; echo armed; while :; do sleep 0.1; done"
    pane_id = service.spawn(["bash", "-c", script])
    service.wait_screen(pane_id, "armed")
    service.call("Signal", "ts", [pane_id, "USR1"])
    service.wait_screen(pane_id, "got-usr1")
    assert service.panes()[pane_id]["state"] == "running", "the trap kept bash alive"
    service.call("Signal", "ts", [pane_id, "usr1"])  # any case, with or without SIG
    wait_for(
        lambda: service.screen_text(pane_id).count("got-usr1") == 2,
        what="the second USR1 to be trapped",
    )


def test_signal_goes_to_the_foreground_job_not_the_shell(service: Service) -> None:
    """An interactive bash with job control: a foreground job has its own process group.

    Signal must hit that group (the job), not the shell's; once the job is gone,
    the shell's group is the foreground again and gets the next signal.
    """
    pane_id = service.spawn(["bash", "--norc", "--noprofile", "-i"], env={"PS1": "prompt> "})
    shell_pid = pane_pid(service, pane_id)
    service.wait_screen(pane_id, "prompt>")
    # The quotes keep the echoed command line from containing the trap's output.
    send_text(service, pane_id, "trap 'echo \"shell-got-\"usr1' USR1; sleep 1000\n")

    def foreground_job() -> int | None:
        for child in children_of(shell_pid):
            # Until the exec, the child is a copy of bash that would catch USR1 itself.
            if comm_of(child) != "sleep":
                continue
            stat = ProcStat(child)
            if stat.pgrp == child and ProcStat(shell_pid).tpgid == child:
                return child
        return None

    job = wait_for(foreground_job, what="sleep to run as the foreground job")
    assert job is not None
    service.call("Signal", "ts", [pane_id, "USR1"])
    wait_for(lambda: not pid_alive(job), what="the foreground job to die of USR1")
    wait_for(
        lambda: ProcStat(shell_pid).tpgid == shell_pid, what="the shell to take the terminal back"
    )
    # bash runs a trap for a signal caught at its prompt once the line is read, so an
    # empty command line flushes any trap that is pending.
    send_text(service, pane_id, "\n")
    wait_for(
        lambda: service.screen_text(pane_id).count("prompt>") >= 3,
        what="the shell to read an empty command line",
    )
    assert "shell-got-usr1" not in service.screen_text(pane_id), "the shell was signalled too"
    assert pid_alive(shell_pid)

    service.call("Signal", "ts", [pane_id, "USR1"])
    send_text(service, pane_id, "\n")
    service.wait_screen(pane_id, "shell-got-usr1")
    assert service.panes()[pane_id]["state"] == "running"


# -- the pane's terminal, descriptors and environment ----------------------------------


def test_pane_is_a_session_leader_with_a_controlling_terminal(service: Service) -> None:
    pane_id = service.spawn(["sleep", "60"])
    pid = pane_pid(service, pane_id)
    stat = ProcStat(pid)
    assert stat.session == pid, "the pane's process leads its own session"
    assert stat.pgrp == pid
    assert stat.tty_nr != 0, "the pane's process has a controlling terminal"
    assert os.major(stat.tty_nr) == PTS_MAJOR
    assert stat.tpgid == pid, "and is its foreground process group"
    tty = os.readlink(f"/proc/{pid}/fd/0")
    assert tty == f"/dev/pts/{os.minor(stat.tty_nr)}", "the controlling terminal is stdin"


def test_pane_has_only_its_terminal_open(service: Service) -> None:
    # Spawned after another pane and a few calls, so the service holds more fds by now.
    first = service.spawn(["sleep", "60"])
    service.screen(first)
    pane_id = service.spawn(["sleep", "60"])
    pid = pane_pid(service, pane_id)
    fds = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    assert set(fds) == {0, 1, 2}, f"leaked descriptors: {fds}"
    assert fds[0] == fds[1] == fds[2]
    assert fds[0].startswith("/dev/pts/")
    other = pane_pid(service, first)
    assert os.readlink(f"/proc/{other}/fd/0") != fds[0], "each pane has its own terminal"


def test_pane_environment(service: Service) -> None:
    pane_id = service.spawn(["sleep", "60"], env={"MUX_TEST_A": "a b c", "LANG": "C.UTF-8"})
    env = environ_of(pane_pid(service, pane_id))
    assert env["TERM"] == "xterm-256color", "TERM is set (the configured default)"
    assert env["MUX_TEST_A"] == "a b c"
    assert env["LANG"] == "C.UTF-8"
    assert env["HOME"] == str(service.home), "the service's environment is inherited"
    assert env["MUX_PANE"] == str(pane_id)


def test_supervisor_variables_do_not_reach_panes(
    make_service: Callable[..., Service], tmp_root: Path
) -> None:
    notify_path = tmp_root / "notify.sock"
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(notify_path))
    notify.settimeout(15)
    try:
        service = make_service(
            extra_env={
                "LISTEN_FDS": "1",
                "LISTEN_PID": "1",
                "LISTEN_FDNAMES": "mux.sock",
                "NOTIFY_SOCKET": str(notify_path),
                "WATCHDOG_USEC": "60000000",
                "WATCHDOG_PID": "1",
            }
        )
        ready = notify.recv(4096).split(b"\n")
        assert ready[0] == b"READY=1", "muxd tells its supervisor it is ready"
        explicit = service.spawn(["sleep", "60"])
        shell = service.spawn(shell="sh")
        for pane_id in (explicit, shell):
            env = environ_of(pane_pid(service, pane_id))
            leaked = [name for name in SUPERVISOR_VARIABLES if name in env]
            assert leaked == [], f"pane {pane_id} inherited {leaked}"
            assert "TERM" in env
        assert service.stop() == 0
        notify.settimeout(10)
        messages = []
        while b"STOPPING=1" not in messages:
            messages.append(notify.recv(4096))  # STATUS= lines come first
        assert all(m.startswith((b"STATUS=", b"STOPPING=1")) for m in messages), messages
    finally:
        notify.close()


def test_starts_with_an_unreachable_notify_socket(
    make_service: Callable[..., Service], tmp_root: Path
) -> None:
    service = make_service(extra_env={"NOTIFY_SOCKET": str(tmp_root / "nobody-listens")})
    pane_id = service.spawn(["sleep", "60"])
    assert "NOTIFY_SOCKET" not in environ_of(pane_pid(service, pane_id))
    assert service.stop() == 0


# -- reaping and killing ------------------------------------------------------------------


def test_no_zombies_after_exit_and_kill(service: Service) -> None:
    exiting = [service.spawn(["sh", "-c", f"exit {n}"]) for n in range(3)]
    running = [service.spawn(["sleep", "60"]) for _ in range(3)]
    pids = {pane_id: pane["pid"] for pane_id, pane in service.panes().items()}
    for pane_id in exiting:
        service.wait_exited(pane_id)
        assert is_reaped(pids[pane_id]), f"pane {pane_id} left a zombie"
    for pane_id in running:
        service.call("Kill", "t", [pane_id])
    for pane_id in running:
        # A zombie keeps its /proc entry: waiting for the entry to go waits for the reaping.
        wait_for(
            partial(is_reaped, pids[pane_id]), what=f"pane {pane_id}'s process to end and be reaped"
        )
    assert service.process is not None
    zombies = [c for c in children_of(service.process.pid) if ProcStat(c).state == "Z"]
    assert zombies == [], f"muxd has unreaped children: {zombies}"


def test_kill_ends_a_process_that_ignores_hangup(make_service: Callable[..., Service]) -> None:
    service = make_service(config="kill_grace_seconds = 0.5\n")
    # trap "" is inherited across exec: sleep ignores SIGHUP too.
    pane_id = service.spawn(["sh", "-c", 'trap "" HUP; echo armed; exec sleep 1000'])
    service.wait_screen(pane_id, "armed")
    pid = pane_pid(service, pane_id)
    with open(f"/proc/{pid}/status") as f:
        ignored = next(int(line.split()[1], 16) for line in f if line.startswith("SigIgn:"))
    assert ignored & (1 << (signal.SIGHUP - 1)), "the test program does ignore SIGHUP"
    service.call("Kill", "t", [pane_id])
    assert pane_id not in service.panes(), "Kill closes the pane at once"
    wait_for(
        lambda: is_reaped(pid),
        timeout=0.5 + 3,
        what="the SIGHUP-ignoring process to be killed (and reaped) after kill_grace_seconds",
    )
    assert service.process is not None
    assert service.process.poll() is None


# -- stopping muxd ------------------------------------------------------------------


def test_stopping_muxd_ends_every_pane(service: Service) -> None:
    panes = [
        service.spawn(["sleep", "60"]),
        service.spawn(["bash", "-c", "while :; do sleep 0.1; done"]),
        service.spawn(["bash", "--norc", "--noprofile", "-i"], env={"PS1": "p> "}),
        service.spawn(["sh", "-c", "exit 0"]),
    ]
    service.wait_exited(panes[-1])
    pids = [pane_pid(service, pane_id) for pane_id in panes]
    assert service.stop() == 0, service.log()
    for pid in pids:
        wait_gone(pid, what=f"pane process {pid} to end")


def test_stopping_muxd_ends_a_process_that_ignores_hangup(
    make_service: Callable[..., Service],
) -> None:
    service = make_service(config="kill_grace_seconds = 0.5\n")
    pane_id = service.spawn(["sh", "-c", 'trap "" HUP; echo armed; exec sleep 1000'])
    service.wait_screen(pane_id, "armed")
    pid = pane_pid(service, pane_id)
    try:
        assert service.stop() == 0, service.log()
        wait_for(
            lambda: not pid_alive(pid),
            timeout=0.5 + 3,
            what="muxd's stop to end the SIGHUP-ignoring pane process",
        )
    finally:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)  # do not leave it behind for other tests


def test_kill_and_signal_right_after_exit_never_hit_the_service(service: Service) -> None:
    """Between a pane's session leader exiting and muxd reaping it, the terminal has no
    foreground group (tcgetpgrp answers 0). killpg(0, ...) would signal muxd's own group:
    muxd logs every SIGHUP it receives and would stop on SIGTERM. One warm connection
    sends Kill/Signal the moment Spawn answers, to land in that window."""
    from dbus_fast import Variant

    def storm() -> None:
        client = connect(autostart=False)
        try:
            for _ in range(40):
                options = {"argv": Variant("as", ["true"])}
                first, _, _ = client.call("Spawn", "a{sv}", [options])
                second, _, _ = client.call("Spawn", "a{sv}", [options])
                client.call("Kill", "t", [first])
                try:
                    client.call("Signal", "ts", [second, "TERM"])
                except RemoteError as e:
                    assert e.name == "PreconditionFailed", e.message  # it had exited
                client.call("Kill", "t", [second])
        finally:
            client.close()

    with service.environment():
        storm()
    assert service.process is not None and service.process.poll() is None, service.log()
    assert "SIGHUP ignored" not in service.log()
    assert service.panes() == {}


def _job_of(shell_pid: int, argv0: str) -> int | None:
    """The pid of a process in `shell_pid`'s session running `argv0`, if any."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.getsid(int(name)) != shell_pid or int(name) == shell_pid:
                continue
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if f.read().split(b"\0")[0] == argv0.encode():
                    return int(name)
        except OSError:
            continue
    return None


@pytest.mark.parametrize("how", ["kill", "stop"])
def test_closing_ends_a_foreground_job_that_ignores_hangup(tmp_root: Path, how: str) -> None:
    """`Kill` is an unconditional close (docs/dbus-api.md): the shell goes with the hangup, and a
    job of its (in its own process group, same session) that ignores SIGHUP is killed
    when the grace period ends — by Kill, and when the service stops."""
    svc = Service(tmp_root, bus_address=None, config="kill_grace_seconds = 0.5\n").start()
    try:
        shell = svc.spawn(["bash", "--norc", "-i"], env={"PS1": "ready> "})
        shell_pid = int(svc.panes()[shell]["pid"])
        svc.wait_screen(shell, "ready>")
        svc.call("SendInput", "tay", [shell, b"sh -c 'trap \"\" HUP; exec sleep 997'\r"])
        job = wait_for(lambda: _job_of(shell_pid, "sleep"), what="the foreground job")
        assert os.getpgid(job) != shell_pid, "the job runs in its own process group"
        if how == "kill":
            svc.call("Kill", "t", [shell])
            wait_gone(job, timeout=10, what="the job that ignores SIGHUP")
        else:
            assert svc.stop() == 0
            assert not pid_alive(job), "the service stopped and left the job running"
        wait_gone(shell_pid, timeout=10)
    finally:
        svc.stop()


def test_a_second_muxd_on_the_same_state_directory_is_refused(service: Service) -> None:
    """Another runtime directory (another XDG_RUNTIME_DIR) but the same state: refused,
    before it could overwrite the first one's session."""
    other_runtime = service.root / "run2"
    other_runtime.mkdir(mode=0o700)
    env = dict(service.env, XDG_RUNTIME_DIR=str(other_runtime))
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)  # it would start its own bus, were it allowed
    result = subprocess.run(
        muxd_argv(),
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        cwd="/",
    )
    assert result.returncode == 75, result.stderr
    assert "another muxd already uses the state directory" in result.stderr
    # The first one still serves, unaffected.
    pane = service.spawn(["sh", "-c", "echo still-here; exec cat"])
    service.wait_screen(pane, "still-here")
