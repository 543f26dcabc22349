"""Test harness: a real dbus-daemon, a real muxd process, and ways to talk to them.

Every muxd gets its own XDG directories (runtime, state, config, home), so
tests never see each other's panes or files. Waiting is always for a
condition with a deadline, never for a guessed time.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from mux.system.muxd_command import muxd_argv

if TYPE_CHECKING:
    from dbus_fast import Message
    from dbus_fast.aio import MessageBus

    from muxctl.errors import RemoteError

T = TypeVar("T")

DEFAULT_TIMEOUT = 15.0


def outside_environment() -> dict[str, str]:
    """This process's environment without anything that would tie a test to the
    developer's own mux, bus, XDG directories or service manager."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MUX_", "DBUS_", "XDG_", "LISTEN_", "NOTIFY_", "WATCHDOG_"))
    }


def wait_for(
    condition: Callable[[], T], timeout: float = DEFAULT_TIMEOUT, what: str = "condition"
) -> T:
    """Poll `condition` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(delay)  # poll interval, not a guess at how long the event takes
        delay = min(delay * 2, 0.05)


# A session bus that activates none of the machine's services: a test bus must never
# start the machine's gnome-keyring (with pytest's HOME) when muxd looks for its key.
TEST_BUS_CONFIG = """<busconfig>
  <type>session</type>
  <keep_umask/>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>{servicedirs}
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


def bus_config(servicedirs: Sequence[Path] = ()) -> str:
    """TEST_BUS_CONFIG, activating only what `servicedirs` hold."""
    dirs = "".join(f"\n  <servicedir>{directory}</servicedir>" for directory in servicedirs)
    return TEST_BUS_CONFIG.format(servicedirs=dirs)


class DBusDaemon:
    """A private session-type dbus-daemon listening on a socket in a temp dir, that can
    activate no service of the machine's (TEST_BUS_CONFIG)."""

    def __init__(self, directory: Path) -> None:
        self.socket_path = directory / "test-bus"
        self.address = f"unix:path={self.socket_path}"
        config = directory / "test-bus.conf"
        config.write_text(bus_config())
        self.process = subprocess.Popen(
            [
                "dbus-daemon",
                f"--config-file={config}",
                "--nofork",
                "--nopidfile",
                f"--address={self.address}",
                "--print-address=1",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "dbus-daemon did not start"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def name_owned(bus_address: str) -> bool:
    """Whether org.mux.Mux1 has an owner, asked of the bus itself (busctl): nothing is
    activated by asking."""
    bus = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")
    result = subprocess.run(
        ["busctl", f"--address={bus_address}", "call", *bus, "NameHasOwner", "s", "org.mux.Mux1"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return result.stdout.strip() == "b true"


def start_activating_bus(
    directory: Path, address: str, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    """A session dbus-daemon at `address` that starts muxd (with `env`) when something asks
    for org.mux.Mux1, and activates nothing else; its files in `directory`. Running when
    this returns; the caller terminates it."""
    services = directory / "dbus-1" / "services"
    services.mkdir(parents=True)
    (services / "org.mux.Mux1.service").write_text(
        f"[D-BUS Service]\nName=org.mux.Mux1\nExec={shlex.join(muxd_argv())}\n"
    )
    config = directory / "session-bus.conf"
    config.write_text(bus_config([services]))
    argv = ["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile"]
    daemon = subprocess.Popen(
        [*argv, f"--address={address}", "--print-address=1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert daemon.stdout is not None
    if not daemon.stdout.readline():
        daemon.wait(timeout=10)
        raise AssertionError("the activating dbus-daemon did not start")
    return daemon


class Service:
    """One muxd process with its own XDG directories.

    bus="external": uses the given dbus-daemon (DBUS_SESSION_BUS_ADDRESS).
    bus="private": no session bus at all; muxd starts its own at <runtime>/bus.
    """

    def __init__(
        self,
        root: Path,
        *,
        bus_address: str | None,
        config: str | None = None,
        extra_env: dict[str, str] | None = None,
        argv_prefix: Sequence[str] = (),
    ) -> None:
        """`argv_prefix`: runs muxd through it, which must exec in place (e.g. nsenter
        into a network namespace)."""
        self.root = root
        self.argv_prefix = list(argv_prefix)
        self.home = root / "home"
        self.xdg_runtime = root / "run"
        self.runtime = self.xdg_runtime / "mux"
        self.state = root / "state"
        self.config_home = root / "config"
        for d in (self.home, self.xdg_runtime, self.state, self.config_home):
            d.mkdir(mode=0o700, exist_ok=True)
        if config is not None:
            (self.config_home / "mux").mkdir(exist_ok=True)
            (self.config_home / "mux" / "config.toml").write_text(config)
        env = outside_environment()
        env.update(
            HOME=str(self.home),
            XDG_RUNTIME_DIR=str(self.xdg_runtime),
            XDG_STATE_HOME=str(self.state),
            XDG_CONFIG_HOME=str(self.config_home),
            PYTHONUNBUFFERED="1",
        )
        if bus_address is not None:
            env["DBUS_SESSION_BUS_ADDRESS"] = bus_address
        env.update(extra_env or {})
        self.env = env
        self.bus_address = bus_address or f"unix:path={self.runtime / 'bus'}"
        self.log_path = root / "muxd.log"
        self._log_start = 0
        self.process: subprocess.Popen[bytes] | None = None

    # -- lifecycle ------------------------------------------------------------

    def start(self, wait: bool = True) -> Service:
        log = open(self.log_path, "ab")  # noqa: SIM115
        self._log_start = log.tell()  # readiness is looked for in this run's lines
        self.process = subprocess.Popen(
            [*self.argv_prefix, *muxd_argv()],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd="/",
            # Like systemd and muxctl's autostart: muxd leads its own session,
            # so no signal meant for its group can reach the test runner.
            start_new_session=True,
        )
        log.close()
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self) -> None:
        def ready() -> bool:
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(f"muxd exited with {self.process.returncode}:\n{self.log()}")
            return "ready:" in self.log()[self._log_start :]

        wait_for(ready, what="muxd to become ready")

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def stop(self) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                # What it would have stopped (its private bus, its panes) is not left
                # running past the test.
                for pid in self.own_processes():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
        return self.process.returncode

    # -- processes started in the background (muxctl's autostart) -------------

    def own_processes(self) -> list[int]:
        """Every live process started with this service's XDG_RUNTIME_DIR: muxd, its bus, panes."""
        return pids_with_env("XDG_RUNTIME_DIR", str(self.xdg_runtime))

    def background_muxd(self) -> list[int]:
        """muxd processes of this environment that this harness did not start itself."""
        mine = self.process.pid if self.process is not None else None
        return [
            pid for pid in self.own_processes() if pid != mine and _is_muxd(process_cmdline(pid))
        ]

    def stop_background(self, timeout: float = DEFAULT_TIMEOUT) -> list[int]:
        """SIGTERM every background muxd and wait until every process of this environment
        is gone. Returns the pids that had to be SIGKILLed (empty when all went cleanly)."""
        for pid in self.background_muxd():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        try:
            wait_for(
                lambda: not self.own_processes(),
                timeout,
                what="the background muxd and its children to exit",
            )
        except AssertionError:
            leftovers = self.own_processes()
            for pid in leftovers:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            return leftovers
        return []

    # -- talking to it --------------------------------------------------------

    def muxctl_process(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[str]:
        """muxctl running in the background, its output in pipes (text)."""
        return subprocess.Popen(
            [sys.executable, "-m", "muxctl", *args],
            env=self.env if env is None else env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def muxctl(
        self,
        *args: str,
        check: bool = False,
        input: bytes | None = None,
        timeout: float = 30,
        cwd: Path | str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, "-m", "muxctl", *args],
            check=False,
            env=self.env,
            input=input.decode() if input is not None else None,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"muxctl {' '.join(args)} exited {result.returncode}: {result.stderr}\n"
                f"muxd's log ends:\n{self.log()[-2000:]}"
            )
        return result

    def busctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return _run_tool(
            ["busctl", f"--address={self.bus_address}", "--", *args], check, f"busctl {args}"
        )

    def gdbus_call(
        self, method: str, *args: str, path: str = "/org/mux/Mux1", check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """`method` is fully qualified, e.g. org.mux.Mux1.Manager.Spawn."""
        argv = ["gdbus", "call", "--address", self.bus_address, "--dest", "org.mux.Mux1"]
        argv += ["--object-path", path, "--method", method, *args]
        return _run_tool(argv, check, f"gdbus {method}")

    @contextmanager
    def environment(self) -> Iterator[None]:
        """This service's environment in os.environ, for our client's bus discovery."""
        env_backup = dict(os.environ)
        os.environ.clear()
        os.environ.update(self.env)
        try:
            yield
        finally:
            os.environ.clear()
            os.environ.update(env_backup)

    def call(
        self, member: str, signature: str = "", body: list[Any] | None = None, **kwargs: Any
    ) -> list[Any]:
        """One method call through our own client library; raises RemoteError on refusal."""
        with self.environment():
            return _call(member, signature, body or [], kwargs)

    def spawn(self, argv: list[str] | None = None, **options: Any) -> int:
        """Spawn through our client; options are (signature, value) pairs or plain values."""
        from dbus_fast import Variant

        types = {
            "cwd": "s",
            "title": "s",
            "window": "t",
            "rows": "q",
            "cols": "q",
            "env": "a{ss}",
            "shell": "s",
            "bind_instance": "b",
            "resurrection": "b",
        }
        opts: dict[str, Variant] = {}
        if argv is not None:
            opts["argv"] = Variant("as", argv)
        for name, value in options.items():
            opts[name] = Variant(types[name], value)
        pane_id, _instance, _path = self.call("Spawn", "a{sv}", [opts])
        return int(pane_id)

    def screen(self, pane_id: int) -> list[str]:
        (lines,) = self.call("GetScreen", "t", [pane_id])
        return list(lines)

    def screen_text(self, pane_id: int) -> str:
        return "\n".join(self.screen(pane_id))

    def panes(self) -> dict[int, dict[str, Any]]:
        (entries,) = self.call("ListPanes")
        out = {}
        for entry in entries:
            plain = {k: v.value for k, v in entry.items()}
            out[int(plain["id"])] = plain
        return out

    def wait_screen(self, pane_id: int, needle: str, timeout: float = DEFAULT_TIMEOUT) -> str:
        def shown() -> str:
            text = self.screen_text(pane_id)
            return text if needle in text else ""

        try:
            return wait_for(shown, timeout, what=f"{needle!r} on the screen of pane {pane_id}")
        except AssertionError as timed_out:
            screen = self.screen_text(pane_id).rstrip()
            raise AssertionError(f"{timed_out}; the screen:\n{screen}") from None

    def cwd(self, pane_id: int) -> tuple[str, str]:
        """(Cwd, CwdSource) of a pane, from ListPanes."""
        info = self.panes()[pane_id]
        return info["cwd"], info["cwd_source"]

    def cwd_properties(self, pane_id: int) -> str:
        """The pane object's Cwd and CwdSource as busctl (an independent client) prints them."""
        path = f"/org/mux/Mux1/pane/{pane_id}"
        return self.busctl(
            "get-property", "org.mux.Mux1", path, "org.mux.Mux1.Pane", "Cwd", "CwdSource"
        ).stdout

    def wait_size(self, pane_id: int, rows: int, cols: int, what: str) -> None:
        """Until pane `pane_id` is `rows` x `cols` (a client resized it)."""
        wait_for(
            lambda: (self.panes()[pane_id]["rows"], self.panes()[pane_id]["cols"]) == (rows, cols),
            what=what,
        )

    def wait_exited(self, pane_id: int, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        def exited() -> dict[str, Any]:
            pane = self.panes().get(pane_id)
            return pane if pane is not None and pane["state"] == "exited" else {}

        return wait_for(exited, timeout, what=f"pane {pane_id} to exit")


def _run_tool(argv: list[str], check: bool, what: str) -> subprocess.CompletedProcess[str]:
    """An independent D-Bus client (busctl, gdbus), run to completion."""
    result = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=30)
    if check and result.returncode != 0:
        raise AssertionError(f"{what} failed: {result.stderr}")
    return result


def _call(member: str, signature: str, body: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    from muxctl.client import connect

    client = connect(autostart=False)
    try:
        return [_as_dbus_fast(value) for value in client.call(member, signature, body, **kwargs)]
    finally:
        client.close()


def _as_dbus_fast(value: Any) -> Any:
    """muxctl's client reads variants as muxctl.wire.Variant; the tests compare with
    dbus-fast's (the service's own library), so they get those."""
    from dbus_fast import Variant

    from muxctl.wire import Variant as WireVariant

    if isinstance(value, WireVariant):
        return Variant(value.signature, _as_dbus_fast(value.value))
    if isinstance(value, dict):
        return {k: _as_dbus_fast(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_dbus_fast(v) for v in value]
    return value


@contextmanager
def temp_root() -> Iterator[Path]:
    # Short paths: Unix socket paths are limited to 108 bytes.
    path = Path(tempfile.mkdtemp(prefix="mux-t-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def pid_alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):  # reaped between the open and the read
        return False
    return fields[0] != "Z"


def _is_muxd(cmdline: list[str]) -> bool:
    """`python [-P] -m mux [...]`"""
    args = [arg for arg in cmdline[1:] if arg != "-P"]
    return args[:2] == ["-m", "mux"]


def process_cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0")[:-1]]


def resurrection_endpoint(pid: int) -> Path:
    """A pane program's APPLICATION_RESURRECTION_SOCKET, read from /proc once the program
    runs: right after Spawn, /proc may still show muxd's environment, copied by the fork
    before the exec (the long fuzz met this once in ~45,000 spawns)."""
    prefix = b"APPLICATION_RESURRECTION_SOCKET="

    def endpoint() -> Path | None:
        for entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
            if entry.startswith(prefix):
                return Path(entry[len(prefix) :].decode())
        return None

    return wait_for(endpoint, what=f"process {pid} to run with its resurrection endpoint")


def pids_with_env(name: str, value: str) -> list[int]:
    """Live (non-zombie) processes whose initial environment has `name=value` (Linux /proc)."""
    wanted = f"{name}={value}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                variables = f.read().split(b"\0")
        except OSError:
            continue
        if wanted in variables and pid_alive(int(entry)):
            found.append(int(entry))
    return found


# -- signals ------------------------------------------------------------------

SERVICE_SIGNALS = "type='signal',sender='org.mux.Mux1'"


class BusMonitor:
    """Records the signals the service emits, on a bus connection of its own.

    The connection lives in a background thread with its own event loop, so a
    test can subscribe first, then act through `Service.call` and the CLI
    tools, then wait (with a deadline) for the signal it expects. Use it as a
    context manager: the match rules are in place when `__enter__` returns.
    """

    def __init__(self, address: str, rules: Sequence[str] = (SERVICE_SIGNALS,)) -> None:
        self.address = address
        self.rules = tuple(rules)
        self._signals: list[Message] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._bus: MessageBus | None = None

    def __enter__(self) -> BusMonitor:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._subscribe(), self._loop).result(DEFAULT_TIMEOUT)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bus is not None:
            self._loop.call_soon_threadsafe(self._bus.disconnect)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(DEFAULT_TIMEOUT)
        self._loop.close()

    async def _subscribe(self) -> None:
        from dbus_fast import MessageType
        from dbus_fast.aio import MessageBus

        from mux.system.bus_daemon import bus_daemon_message

        bus = await MessageBus(bus_address=self.address).connect()
        bus.add_message_handler(self._record)
        for rule in self.rules:
            reply = await bus.call(bus_daemon_message("AddMatch", "s", [rule]))
            assert reply is not None and reply.message_type is MessageType.METHOD_RETURN, (
                f"AddMatch {rule!r} was refused: {reply and reply.body}"
            )
        self._bus = bus

    def _record(self, message: Message) -> None:
        from dbus_fast import MessageType

        if message.message_type is MessageType.SIGNAL:
            with self._lock:
                self._signals.append(message)

    def signals(
        self, member: str | None = None, *, interface: str | None = None, path: str | None = None
    ) -> list[Message]:
        """Every signal recorded so far, optionally only those matching all given fields."""
        with self._lock:
            recorded = list(self._signals)
        return [
            m
            for m in recorded
            if (member is None or m.member == member)
            and (interface is None or m.interface == interface)
            and (path is None or m.path == path)
        ]

    def wait_signal(
        self,
        member: str,
        accept: Callable[[Message], bool] = lambda _m: True,
        *,
        interface: str | None = None,
        path: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Message:
        """The first recorded signal `member` (on `interface`/`path`) that `accept` approves."""

        def found() -> Message | None:
            for message in self.signals(member, interface=interface, path=path):
                if accept(message):
                    return message
            return None

        message = wait_for(found, timeout, what=f"signal {member} on {path or 'any path'}")
        assert message is not None
        return message


# -- refusals -------------------------------------------------------------------

ERROR_PREFIX = "org.mux.Mux1.Error."


def private_dirs(service: Service) -> list[str]:
    """Directories of the service's own that no error message may reveal."""
    return [
        str(service.runtime),
        str(service.xdg_runtime),
        str(service.state),
        str(service.config_home),
    ]


def assert_readable_message(service: Service, message: str) -> None:
    """An error message a person can act on: words, no traceback, no private path."""
    assert message.strip(), "the error message is empty"
    for leak in ("Traceback", 'File "', "[Errno", "Errno ", "<built-in", "object at 0x"):
        assert leak not in message, f"error message leaks {leak!r}: {message!r}"
    for directory in private_dirs(service):
        assert directory not in message, f"error message names {directory}: {message!r}"


def assert_answers(service: Service) -> None:
    """muxd is still running and answers a call."""
    assert service.process is not None
    assert service.process.poll() is None, (
        f"muxd exited with {service.process.returncode}:\n{service.log()}"
    )
    (entries,) = service.call("ListPanes")
    assert isinstance(entries, list)


def refused(
    service: Service,
    error: str,
    member: str,
    signature: str = "",
    body: list[Any] | None = None,
    **kwargs: Any,
) -> RemoteError:
    """Make a call through our client that must be refused with `org.mux.Mux1.Error.<error>`.

    Checks the message too, and that the service still runs and answers afterwards.
    """
    from muxctl.errors import RemoteError

    try:
        reply = service.call(member, signature, body, **kwargs)
    except RemoteError as e:
        assert e.dbus_name == ERROR_PREFIX + error, (
            f"{member} was refused with {e.dbus_name} ({e.message!r}), expected {error}"
        )
        assert e.name == error
        assert_readable_message(service, e.message)
        assert_answers(service)
        return e
    raise AssertionError(f"{member}{body!r} succeeded ({reply!r}); expected {error}")


def gdbus_refused(
    service: Service, error: str, method: str, *args: str, path: str = "/org/mux/Mux1"
) -> str:
    """The same as `refused`, through gdbus: returns the error message."""
    result = service.gdbus_call(method, *args, path=path, check=False)
    assert result.returncode != 0, f"gdbus {method} {args} succeeded: {result.stdout}"
    marker = f"GDBus.Error:{ERROR_PREFIX}{error}: "
    assert marker in result.stderr, f"gdbus {method} {args}: expected {error}, got {result.stderr}"
    message = result.stderr.split(marker, 1)[1].strip()
    assert_readable_message(service, message)
    assert_answers(service)
    return message


def wait_gone(pid: int, timeout: float = DEFAULT_TIMEOUT, what: str = "") -> None:
    """Wait until `pid` has ended (a zombie counts as ended: see `pid_alive`)."""
    wait_for(lambda: not pid_alive(pid), timeout, what or f"process {pid} to end")
