"""Another user's socket where mux's would be: `muxctl attach` refuses it and sends nothing.

muxctl run without XDG_RUNTIME_DIR (su, ssh without pam_systemd) while muxd serves on a
session bus looks for the attach socket in /tmp/mux-$UID. A second uid (`nobody`, through
setpriv) gets there first: a directory of its own, mode 0777, and a listening mux.sock
that records every byte it receives. So that the test never touches the machine's real
/tmp/mux-0, muxctl and the fake server run in a private mount namespace with a fresh
tmpfs on /tmp (the test's own directory bound back in at the same path).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import DEFAULT_TIMEOUT, DBusDaemon, Service, wait_for

NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
RUNTIME = f"/tmp/mux-{os.getuid()}"
SOCKET = f"{RUNTIME}/mux.sock"

# The other user's server: records what each connection sends first (`received`), and
# one line per connection (`connections`). The test's script closes its stdin once
# muxctl has exited; by then whatever muxctl did is in the kernel's buffers, so one
# last sweep without waiting sees all of it.
FAKE_SERVER = r"""
import os, select, socket, sys
path, spy = sys.argv[1], sys.argv[2]
directory = os.path.dirname(path)
if not os.path.exists(directory):
    os.mkdir(directory)
    os.chmod(directory, 0o777)
server = socket.socket(socket.AF_UNIX)
server.bind(path)
os.chmod(path, 0o777)
server.listen(8)
server.setblocking(False)
open(os.path.join(spy, "ready"), "w").close()
connections = []

def record(name, data):
    with open(os.path.join(spy, name), "ab") as f:
        f.write(data)

def serve():
    while True:
        try:
            conn, _ = server.accept()
        except BlockingIOError:
            break
        conn.setblocking(False)
        connections.append(conn)
    for conn in list(connections):
        try:
            data = conn.recv(65536)
        except BlockingIOError:
            continue
        # Whatever came (or the end): recorded, and the connection closed, so that a
        # muxctl that talked ends too ("mux went away").
        record("received", data)
        record("connections", b"ended with %d bytes\n" % len(data))
        connections.remove(conn)
        conn.close()

while True:
    ready, _, _ = select.select([server, sys.stdin, *connections], [], [])
    if sys.stdin in ready:
        serve()
        break
    serve()
"""

# Runs as root in a new mount namespace: /tmp made fresh, with what the test needs of
# the old one bound back in (KEEP: the test's directory — the bus, muxd's runtime, the
# spy files — and, when they are under /tmp, the interpreter, its packages and this
# checkout); then the fake server, then muxctl on the terminal the test gave, without
# XDG_RUNTIME_DIR.
SCENARIO = r"""
set -eu
mount --bind /tmp "$HOLD"
mount -t tmpfs -o mode=1777 tmpfs /tmp
printf '%s\n' "$KEEP" | while IFS= read -r top; do
    mkdir -p "/tmp/$top"
    mount --bind "$HOLD/$top" "/tmp/$top"
done
eval "$BEFORE"
mkfifo "$SPY/stop"
setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$PY" -c "$FAKE_SERVER" "$SOCKET" "$SPY" < "$SPY/stop" &
server=$!
exec 4> "$SPY/stop"
while [ ! -e "$SPY/ready" ]; do
    kill -0 "$server"  # (set -e: a server that died ends the scenario)
    sleep 0.01
done
eval "$AFTER"
set +e
env -u XDG_RUNTIME_DIR "$PY" -m muxctl "$@" 2> "$SPY/stderr"
echo $? > "$SPY/status"
exec 4>&-
wait "$server"
"""


class Terminal:
    """A pty for muxctl (attach needs one), its output read and dropped as it comes so
    that nothing written to it can block."""

    def __enter__(self) -> Terminal:
        self.primary, self.secondary = os.openpty()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        return self

    def _drain(self) -> None:
        with contextlib.suppress(OSError):  # EIO once no process has the terminal open
            while os.read(self.primary, 65536):
                pass

    def __exit__(self, *exc: object) -> None:
        os.close(self.secondary)
        self._reader.join(timeout=DEFAULT_TIMEOUT)
        os.close(self.primary)


@pytest.fixture
def session_service(tmp_root: Path) -> Iterator[Service]:
    """A muxd on a session bus of its own, both inside `tmp_root` (bound into the
    namespace)."""
    _needs_root_tools()
    daemon = DBusDaemon(tmp_root)
    svc = Service(tmp_root, bus_address=daemon.address)
    try:
        yield svc.start()
    finally:
        svc.stop()
        daemon.stop()


def _needs_root_tools() -> None:
    if os.getuid() != 0:
        pytest.skip("needs root: a mount namespace and a second uid")
    for tool in ("setpriv", "unshare", "mount", "mkfifo"):
        if shutil.which(tool) is None:
            pytest.skip(f"needs {tool}")


def _spy_dir(service: Service) -> Path:
    """Where the fake server (nobody) writes what it saw."""
    spy = service.root / "spy"
    spy.mkdir(mode=0o777)
    spy.chmod(0o777)
    service.root.chmod(0o755)
    for name in ("received", "connections"):
        (spy / name).touch(mode=0o666)
        (spy / name).chmod(0o666)
    return spy


def _kept_under_tmp(root: Path) -> list[str]:
    """The entries of /tmp the scenario binds back in: those holding the test's
    directory, the interpreter, the packages it imports and this checkout (a clone
    under /tmp, a venv under /tmp)."""
    needed = [root, Path(sys.executable), Path(sys.prefix), Path(sys.base_prefix)]
    needed += [Path(entry) for entry in sys.path if entry]
    needed.append(Path(__file__).resolve().parents[2])
    tmp = Path("/tmp")
    tops = set()
    for path in needed:
        for candidate in {path.absolute(), path.resolve()}:
            if candidate.is_relative_to(tmp) and candidate != tmp:
                tops.add(candidate.relative_to(tmp).parts[0])
    return sorted(tops)


def _run_scenario(
    service: Service, *muxctl_args: str, before: str = "", after: str = ""
) -> dict[str, object]:
    """muxctl `muxctl_args` on a terminal, with nobody's server at /tmp/mux-$UID/mux.sock;
    what muxctl said and what the server received."""
    spy = _spy_dir(service)
    hold = Path(tempfile.mkdtemp(prefix="mux-ns-", dir="/var/tmp"))
    env = dict(
        service.env,
        KEEP="\n".join(_kept_under_tmp(service.root)),
        HOLD=str(hold),
        SPY=str(spy),
        PY=sys.executable,
        SOCKET=SOCKET,
        FAKE_SERVER=FAKE_SERVER,
        BEFORE=before,
        AFTER=after,
    )
    argv = ["unshare", "--mount", "--propagation", "private", "bash", "-c", SCENARIO, "bash"]
    with Terminal() as terminal, open(spy / "scenario.log", "wb") as log:
        scenario = subprocess.Popen(
            [*argv, *muxctl_args],
            env=env,
            stdin=terminal.secondary,
            stdout=terminal.secondary,
            stderr=log,
            start_new_session=True,  # its group: muxctl and the server, for the cleanup
        )
        try:
            status: int | None = scenario.wait(timeout=DEFAULT_TIMEOUT * 2)
        except subprocess.TimeoutExpired:
            status = None  # (said below, with what the spy saw)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(scenario.pid, signal.SIGKILL)
            scenario.wait()
            hold.rmdir()  # (empty: the namespace and its mounts are gone with its processes)
    seen = {path.name: path.read_bytes()[-2000:] for path in spy.iterdir() if path.is_file()}
    assert status == 0, f"the scenario ended with {status}: {seen}"
    return {
        "status": int((spy / "status").read_text()),
        "stderr": (spy / "stderr").read_text(),
        "received": (spy / "received").read_bytes(),
        "connections": (spy / "connections").read_text().splitlines(),
    }


# `attach 1` shows one pane (muxctl.attaching); `attach` alone the window view
# (muxctl.pane_link), whose links take the same path.
CLIENTS = [pytest.param(("attach", "1"), id="attach"), pytest.param(("attach",), id="window-view")]


@pytest.mark.parametrize("muxctl_args", CLIENTS)
def test_attach_refuses_a_runtime_dir_another_user_made(
    session_service: Service, muxctl_args: tuple[str, ...]
) -> None:
    outcome = _run_scenario(session_service, *muxctl_args)
    assert outcome["received"] == b"", "muxctl sent bytes to another user's socket"
    assert outcome["connections"] == []  # refused before connecting
    assert outcome["status"] == 1
    stderr = str(outcome["stderr"])
    assert f"refusing the socket {SOCKET}" in stderr, stderr
    assert f"its directory {RUNTIME} is owned by uid {NOBODY}" in stderr, stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize("muxctl_args", CLIENTS)
def test_attach_refuses_a_socket_another_user_serves(
    session_service: Service, muxctl_args: tuple[str, ...]
) -> None:
    """The directory and the socket file are the user's (root made the directory,
    nobody bound the socket while it could, then both were made the user's): only
    SO_PEERCRED tells."""
    outcome = _run_scenario(
        session_service,
        *muxctl_args,
        before=f"mkdir -m 0777 {RUNTIME}",
        after=f"chmod 0700 {RUNTIME} && chown 0:0 {SOCKET}",
    )
    assert outcome["received"] == b"", "muxctl sent bytes to another user's server"
    # Connected (the peer's uid is known only then), then closed without a byte.
    assert outcome["connections"] == ["ended with 0 bytes"]
    assert outcome["status"] == 1
    stderr = str(outcome["stderr"])
    assert f"refusing the socket {SOCKET}: it is served by uid {NOBODY}" in stderr, stderr
    assert "Traceback" not in stderr


@contextlib.contextmanager
def nobodys_server(path: Path, spy: Path) -> Iterator[None]:
    """FAKE_SERVER listening at `path` as nobody, until the block ends."""
    server = subprocess.Popen(
        [*AS_NOBODY, sys.executable, "-c", FAKE_SERVER, str(path), str(spy)],
        stdin=subprocess.PIPE,
    )
    try:
        wait_for(lambda: (spy / "ready").exists() or server.poll() is not None, what="the server")
        assert server.poll() is None, "the fake server did not start"
        yield
    finally:
        assert server.stdin is not None
        server.stdin.close()  # its last sweep, then it exits
        try:
            server.wait(timeout=DEFAULT_TIMEOUT)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_muxctl_refuses_a_private_bus_another_user_serves(tmp_root: Path) -> None:
    """No session bus: muxctl's bus is <runtime>/bus. The runtime directory is the
    user's and private, but the bus socket in it is nobody's server: not even D-Bus's
    authentication (which names our uid) goes to it."""
    _needs_root_tools()
    service = Service(tmp_root, bus_address=None)  # (never started: its directories)
    spy = _spy_dir(service)
    runtime = service.runtime
    runtime.mkdir(mode=0o777)
    runtime.chmod(0o777)  # (nobody binds its socket there, then it is made private)
    service.xdg_runtime.chmod(0o755)
    bus = runtime / "bus"
    with nobodys_server(bus, spy):
        runtime.chmod(0o700)
        os.chown(bus, 0, 0)
        result = service.muxctl("--no-start", "ls")
    assert (spy / "received").read_bytes() == b"", "muxctl sent bytes to another user's bus"
    # (muxctl also asks whether anything listens there: connections that say nothing)
    assert set((spy / "connections").read_text().splitlines()) == {"ended with 0 bytes"}
    assert result.returncode == 1
    assert f"refusing the socket {bus}: it is served by uid {NOBODY}" in result.stderr
    assert "Traceback" not in result.stderr


def test_muxctl_uses_its_private_bus(private_service: Service) -> None:
    """The checks pass for mux's own private bus (dbus-daemon, run as the user)."""
    result = private_service.muxctl("ls", check=True)
    assert result.stderr == ""
