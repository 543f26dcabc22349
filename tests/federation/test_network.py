"""The two-host fixture itself: the link, sshd, the pinned host key, Unix-socket
forwarding, and each fault it can inject, done for real and observed from ssh.

The federation tests build on exactly these behaviours, so each is checked here
on its own, where a failure points at the fixture rather than at the service.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import stat
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

from tests.federation.conftest import TwoHosts, namespace_pids, namespaces
from tests.harness import pid_alive, wait_for


class EchoServer:
    """A Unix socket that sends back whatever it receives, one connection at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # closed: the test is over
            with conn:
                while data := conn.recv(4096):
                    conn.sendall(data)

    def close(self) -> None:
        # shutdown wakes the accept() in the thread; close alone may not.
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self.thread.join(5)


@contextlib.contextmanager
def echo_server(path: Path) -> Iterator[EchoServer]:
    server = EchoServer(path)
    try:
        yield server
    finally:
        server.close()


def accepts(path: Path) -> bool:
    """True once something listens on the Unix socket `path`."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError):
            return False
    return True


class Forward:
    """`ssh -N -L local:remote sat`, run in the hub namespace; stderr goes to a file."""

    def __init__(self, hosts: TwoHosts, local: Path, remote: Path, *options: str) -> None:
        self.local = local
        self.stderr_path = local.with_suffix(".stderr")
        argv = [
            *hosts.hub_prefix,
            *hosts.ssh_command,
            "-N",
            "-o", "ExitOnForwardFailure=yes",
            "-o", "StreamLocalBindUnlink=yes",
            "-o", "StreamLocalBindMask=0177",
            *options,
            "-L", f"{local}:{remote}",
            hosts.destination,
        ]  # fmt: skip
        with open(self.stderr_path, "wb") as stderr:
            self.process = subprocess.Popen(
                argv, env=hosts.client_env, stdin=subprocess.DEVNULL, stderr=stderr
            )
        self.hosts = hosts

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_listening(self) -> None:
        def listening() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(
                    f"ssh -L exited with {self.process.returncode}: {self.stderr()}\n"
                    f"sshd's log:\n{self.hosts.sshd_log()}"
                )
            return accepts(self.local)

        wait_for(listening, what=f"ssh to listen on {self.local}")

    def close(self) -> None:
        terminate(self.process)


def terminate(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM ssh until it exits. OpenSSH 9.2's client loop looks for a signal before
    it blocks in poll(): a SIGTERM landing in between (ssh busy with, say, a failed
    channel) goes unnoticed until the next event, which for an idle `ssh -N` may never
    come; seen here about one time in fifteen. A second SIGTERM interrupts the poll()."""

    def ended() -> bool:
        if process.poll() is None:
            process.terminate()
            return False
        return True

    try:
        wait_for(ended, 10, what=f"ssh (pid {process.pid}) to exit on SIGTERM")
    except AssertionError:
        process.kill()
        process.wait()


@contextlib.contextmanager
def forward(hosts: TwoHosts, local: Path, remote: Path, *options: str) -> Iterator[Forward]:
    fwd = Forward(hosts, local, remote, *options)
    try:
        yield fwd
    finally:
        fwd.close()


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text()
    except OSError:
        return ""


def assert_ssh_works(hosts: TwoHosts) -> None:
    result = hosts.ssh("true")
    assert result.returncode == 0, f"ssh sat true: {result.stderr}\nsshd:\n{hosts.sshd_log()}"


def test_ssh_reaches_the_satellite_only_from_the_hub(two_hosts: TwoHosts) -> None:
    assert_ssh_works(two_hosts)
    # The addresses exist only inside the two namespaces: the root namespace has
    # no route of its own to them (at most a default route that leads elsewhere),
    # so ssh from here cannot reach this sshd.
    here = subprocess.run(
        ["ip", "-o", "addr", "show", "to", str(two_hosts.subnet)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert here.stdout == ""
    log_size = two_hosts.sshd_log_path.stat().st_size
    result = subprocess.run(
        [*two_hosts.ssh_command, "-o", "ConnectTimeout=1", two_hosts.destination, "true"],
        env=two_hosts.client_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 255, result
    assert "Connection from" not in two_hosts.sshd_log(log_size)


def test_the_satellite_session_has_the_satellite_environment(two_hosts: TwoHosts) -> None:
    names = ["HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"]
    script = "; ".join(f'echo "${name}"' for name in names) + "; command -v muxctl"
    result = two_hosts.ssh(script)
    assert result.returncode == 0, result.stderr
    *values, muxctl = result.stdout.splitlines()
    sat = two_hosts.satellite
    assert values == [
        str(sat.home),
        str(sat.xdg_runtime),
        str(sat.state),
        str(sat.config_home),
        str(two_hosts.satellite_data),
    ]
    assert muxctl == shutil.which("muxctl")


def test_a_unix_socket_forward_carries_bytes(two_hosts: TwoHosts) -> None:
    local = two_hosts.root / "fwd.sock"
    with (
        echo_server(two_hosts.satellite.xdg_runtime / "echo.sock") as server,
        forward(two_hosts, local, server.path) as fwd,
    ):
        fwd.wait_listening()
        # Only its owner may use the forwarded socket: it leads into the satellite.
        assert stat.S_IMODE(os.stat(local).st_mode) == 0o600
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(str(local))
            s.sendall(b"hello satellite")
            received = b""
            while len(received) < len(b"hello satellite"):
                chunk = s.recv(4096)
                assert chunk, f"EOF after {received!r}; ssh: {fwd.stderr()}"
                received += chunk
        assert received == b"hello satellite"


def test_a_replaced_host_key_is_refused(two_hosts: TwoHosts) -> None:
    assert_ssh_works(two_hosts)
    two_hosts.replace_host_key()
    result = two_hosts.ssh("true")
    assert result.returncode == 255
    # What ssh (OpenSSH 9.2, LogLevel ERROR) prints, among the usual banner lines:
    #   @    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
    #   Host key for 10.213.N.2 has changed and you have requested strict checking.
    #   Host key verification failed.
    assert "REMOTE HOST IDENTIFICATION HAS CHANGED" in result.stderr, result.stderr
    assert "Host key verification failed." in result.stderr, result.stderr
    # Trusting the new key (what a user does after checking it) lets ssh in again.
    two_hosts.pin_host_key()
    assert_ssh_works(two_hosts)


# What ssh (OpenSSH 9.2) prints for each connection through a -L Unix-socket
# forward whose channel sshd will not open, at LogLevel INFO or above (at the
# ERROR level of our ssh_config it prints nothing at all):
#   channel 2: open failed: connect failed: open failed
# The same words whether sshd refuses Unix-socket forwarding or the socket on the
# satellite is missing: sshd sends "administratively prohibited" only for TCP
# forwards (-L to host:port). Only sshd's log tells the two apart
# ("refused streamlocal port forward: ..."). ssh keeps running in both cases:
# ExitOnForwardFailure covers setting up the listener, not the channels.
REFUSED_CHANNEL = re.compile(r"^channel \d+: open failed: connect failed: open failed$", re.M)


def refused_through(fwd: Forward) -> None:
    """Connect through the forward: ssh accepts, then drops the connection."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(str(fwd.local))
        # ssh may have dropped it already (EPIPE) or drop it now (reset or EOF).
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            s.sendall(b"hello")
            assert s.recv(4096) == b""
    wait_for(lambda: REFUSED_CHANNEL.search(fwd.stderr()), what="ssh to report the failed channel")
    assert fwd.process.poll() is None, "ssh -N -L exited on a failed channel"


def test_forwarding_refused_by_sshd(two_hosts: TwoHosts) -> None:
    two_hosts.restart_sshd(allow_forwarding=False)
    local = two_hosts.root / "fwd.sock"
    with (
        echo_server(two_hosts.satellite.xdg_runtime / "echo.sock") as server,
        forward(two_hosts, local, server.path, "-o", "LogLevel=INFO") as fwd,
    ):
        # ssh listens all the same: the refusal comes only when a connection
        # through the forward asks sshd for a channel.
        fwd.wait_listening()
        refused_through(fwd)
        assert "administratively prohibited" not in fwd.stderr()
        assert "refused streamlocal port forward" in two_hosts.sshd_log()
    # Back on, it works again.
    two_hosts.restart_sshd(allow_forwarding=True)
    assert_ssh_works(two_hosts)


def test_a_missing_remote_socket_reads_the_same(two_hosts: TwoHosts) -> None:
    """Forwarding allowed, nothing listening at the far end: ssh's words are those of a
    refusal (see REFUSED_CHANNEL)."""
    local = two_hosts.root / "fwd.sock"
    missing = two_hosts.satellite.xdg_runtime / "nothing.sock"
    with forward(two_hosts, local, missing, "-o", "LogLevel=INFO") as fwd:
        fwd.wait_listening()
        refused_through(fwd)
    assert "refused streamlocal port forward" not in two_hosts.sshd_log()


def test_link_down_and_up(two_hosts: TwoHosts) -> None:
    assert_ssh_works(two_hosts)
    two_hosts.link_down()
    result = two_hosts.ssh("true", "-o", "ConnectTimeout=2")
    assert result.returncode == 255, result
    two_hosts.link_up()
    wait_for(
        lambda: two_hosts.ssh("true", "-o", "ConnectTimeout=2").returncode == 0,
        what="ssh to work again after link_up",
    )


def test_the_hub_changes_address(two_hosts: TwoHosts) -> None:
    before = two_hosts.ssh("echo $SSH_CONNECTION")
    assert before.stdout.split()[0] == two_hosts.hub_address
    old = two_hosts.hub_address
    new = two_hosts.change_hub_address()
    assert new != old and new == two_hosts.hub_address
    after = two_hosts.ssh("echo $SSH_CONNECTION")
    assert after.returncode == 0, after.stderr
    # sshd sees the connection come from the new address.
    assert after.stdout.split()[0] == new


def test_nothing_survives_the_teardown(
    make_two_hosts: Callable[[], AbstractContextManager[TwoHosts]],
) -> None:
    """What the fixture's own teardown promises (and asserts): no process, namespace or
    file of the test outlives it, even with sessions and a muxd still running."""
    with make_two_hosts() as hosts:
        ours = {hosts.hub_namespace, hosts.satellite_namespace}
        root = hosts.root
        assert ours <= namespaces()
        hosts.satellite.start()
        # An ssh client in the hub namespace, and the sshd processes and the
        # sleeping session it leads to in the satellite's.
        sleeper = subprocess.Popen(
            [*hosts.hub_prefix, *hosts.ssh_command, hosts.destination, "sleep 600"],
            env=hosts.client_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(
            lambda: any("sleep" in _comm(pid) for pid in namespace_pids(hosts.satellite_namespace)),
            what="the remote sleep to start",
        )
        pids = namespace_pids(hosts.hub_namespace) + namespace_pids(hosts.satellite_namespace)
        pids += hosts.satellite.own_processes()  # muxd and its private dbus-daemon
        assert sleeper.pid in pids and len(pids) >= 5, pids
    sleeper.wait(10)
    assert [pid for pid in pids if pid_alive(pid)] == []
    assert not ours & namespaces()
    assert not root.exists()


def test_the_satellite_bus_answers_through_a_forward(two_hosts: TwoHosts) -> None:
    """What federation is for: the satellite's muxd, on its private bus, reached from
    the hub through sshd."""
    two_hosts.satellite.start()
    local = two_hosts.root / "satbus.sock"
    with forward(two_hosts, local, two_hosts.satellite.runtime / "bus") as fwd:
        fwd.wait_listening()
        names = subprocess.run(
            ["busctl", f"--address=unix:path={local}", "--no-pager", "list"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    assert names.returncode == 0, names.stderr
    assert "org.mux.Mux1" in names.stdout


def test_drop_connections_ends_sessions_but_not_sshd(two_hosts: TwoHosts) -> None:
    session = subprocess.Popen(
        [*two_hosts.hub_prefix, *two_hosts.ssh_command, two_hosts.destination, "sleep 600"],
        env=two_hosts.client_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(
            lambda: any(
                "sleep" in _comm(pid) for pid in namespace_pids(two_hosts.satellite_namespace)
            ),
            what="the remote sleep to start",
        )
        two_hosts.drop_connections()
        assert session.wait(10) == 255  # ssh's "connection lost"
        assert_ssh_works(two_hosts)
    finally:
        terminate(session)
