"""What every benchmark needs: an isolated muxd, an isolated tmux server, figures, tables.

Each muxd gets fresh XDG directories and, with no session bus in its environment, starts
its own private dbus-daemon at <runtime>/bus. Each tmux server gets its own
socket directory (TMUX_TMPDIR), socket name (-L) and no configuration file.
Waiting is for a condition with a deadline, never for a guessed time: the same
`wait_for` and environment filter as the tests (tests/harness.py), not copies.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus

# The benchmarks run as `python3 bench/NAME.py`: the repository root holds tests/.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.harness import outside_environment, wait_for

from mux.system.bus_daemon import bus_daemon_message

T = TypeVar("T")

# The interpreter itself, not a pyenv shim (a shim costs ~80 ms a start).
REAL_PYTHON = os.path.realpath(sys.executable)

BUS_NAME = "org.mux.Mux1"
ROOT_PATH = "/org/mux/Mux1"
MANAGER_INTERFACE = "org.mux.Mux1.Manager"

TIMEOUT = 20.0

__all__ = ["wait_for"]  # re-exported for the benchmarks


def _unwind(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


# A benchmark stopped with SIGTERM (kill, timeout) unwinds like one stopped with ^C:
# its context managers stop the muxd and tmux servers it started, and their panes;
# without this, a killed load.py left a muxd and 500 busy writers running.
signal.signal(signal.SIGTERM, _unwind)


def clean_environment() -> dict[str, str]:
    """What the tests hand to what they start, and no tmux of the caller's either."""
    return {k: v for k, v in outside_environment().items() if not k.startswith("TMUX")}


def make_root(prefix: str) -> Path:
    # Short paths: Unix socket paths are limited to 108 bytes.
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))


def child_pids(pid: int) -> list[int]:
    """Direct children of `pid` (all its threads)."""
    children: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return children
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                children.extend(int(c) for c in f.read().split())
        except FileNotFoundError:
            continue
    return children


def process_name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except FileNotFoundError:
        return ""


# -- memory --------------------------------------------------------------------


def _field_kib(path: str, name: str) -> int:
    with open(path) as f:
        for line in f:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    raise LookupError(f"{name} not in {path}")


def cpu_seconds(pid: int) -> float:
    """User plus system time the process has used (/proc/PID/stat), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    """Resident set size (VmRSS), KiB."""
    return _field_kib(f"/proc/{pid}/status", "VmRSS")


def pss_kib(pid: int) -> int:
    """Proportional set size (shared pages divided among their users), KiB."""
    return _field_kib(f"/proc/{pid}/smaps_rollup", "Pss")


# -- figures and tables ------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (fraction in (0, 1])."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Column 0 left-aligned, the figures right-aligned."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    print(line(headers))
    print(line(["-" * w for w in widths]))
    for row in rows:
        print(line(row))


# -- muxd ------------------------------------------------------------------------


class Muxd:
    """One muxd with its own XDG directories and its own private bus.

    Use as a context manager: the exit stops muxd with SIGTERM (it hangs up its
    panes and stops its dbus-daemon) and removes the directories.
    """

    def __init__(self, config: str | None = None) -> None:
        self.root = make_root("mux-b-")
        self.home = self.root / "home"
        xdg_runtime = self.root / "run"
        self.runtime = xdg_runtime / "mux"
        config_home = self.root / "config"
        for d in (self.home, xdg_runtime, self.root / "state", config_home):
            d.mkdir(mode=0o700)
        if config is not None:
            (config_home / "mux").mkdir()
            (config_home / "mux" / "config.toml").write_text(config)
        self.env = clean_environment()
        self.env.update(
            HOME=str(self.home),
            XDG_RUNTIME_DIR=str(xdg_runtime),
            XDG_STATE_HOME=str(self.root / "state"),
            XDG_CONFIG_HOME=str(config_home),
            PYTHONUNBUFFERED="1",
        )
        self.bus_address = f"unix:path={self.runtime / 'bus'}"
        self.log_path = self.root / "muxd.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._bus_pid: int | None = None

    def __enter__(self) -> Muxd:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> None:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [REAL_PYTHON, "-m", "mux"],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd="/",
                # Like a daemon started by systemd or by muxctl: its own session and
                # process group, so no signal muxd sends to "its group" reaches us.
                start_new_session=True,
            )
        wait_for(self._ready, TIMEOUT, what="muxd to become ready")
        buses = [c for c in child_pids(self.pid) if process_name(c) == "dbus-daemon"]
        self._bus_pid = buses[0] if buses else None

    def _ready(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"muxd exited with {self.process.returncode}:\n{self.log()}")
        return "ready:" in self.log()

    @property
    def bus_pid(self) -> int | None:
        """The private dbus-daemon muxd started (its child)."""
        return self._bus_pid

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._bus_pid is not None and process_name(self._bus_pid) == "dbus-daemon":
            # muxd stops its bus itself; this only runs if muxd could not.
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._bus_pid, signal.SIGTERM)
        shutil.rmtree(self.root, ignore_errors=True)


async def connect(address: str) -> MessageBus:
    return await MessageBus(bus_address=address).connect()


async def call(
    bus: MessageBus,
    member: str,
    signature: str = "",
    body: list[Any] | None = None,
    destination: str = BUS_NAME,
) -> list[Any]:
    """One Manager method call; raises RuntimeError with the service's message on refusal."""
    reply = await bus.call(manager_message(member, signature, body or [], destination))
    assert reply is not None
    if reply.message_type is MessageType.ERROR:
        raise RuntimeError(f"{member}: {reply.error_name}: {reply.body}")
    return list(reply.body)


def manager_message(
    member: str,
    signature: str,
    body: list[Any],
    destination: str = BUS_NAME,
    path: str = ROOT_PATH,
) -> Message:
    """A call of a Manager method at the root object, or at `path` (a host object), of
    mux or of `destination`."""
    return Message(
        destination=destination,
        path=path,
        interface=MANAGER_INTERFACE,
        member=member,
        signature=signature,
        body=body,
    )


async def name_has_owner(bus: MessageBus, name: str = BUS_NAME) -> bool:
    """Whether `name` (org.mux.Mux1) is owned, asking the bus daemon (activates nothing)."""
    reply = await bus.call(bus_daemon_message("NameHasOwner", "s", [name]))
    return bool(reply and reply.message_type is MessageType.METHOD_RETURN and reply.body[0])


def spawn_body(argv: Sequence[str]) -> list[Any]:
    """The body of `Spawn` for an explicit launch of `argv`."""
    return [{"argv": Variant("as", list(argv))}]


async def spawn(bus: MessageBus, argv: Sequence[str]) -> int:
    pane_id, _instance, _path = await call(bus, "Spawn", "a{sv}", spawn_body(argv))
    return int(pane_id)


async def screen(bus: MessageBus, pane_id: int) -> list[str]:
    (lines,) = await call(bus, "GetScreen", "t", [pane_id])
    return list(lines)


# -- tmux --------------------------------------------------------------------------


class Tmux:
    """One tmux server: its own socket directory and name, no configuration file.

    The session starts detached at 80x24 with `initial` as its first window.
    """

    def __init__(self, name: str, initial: Sequence[str] = ("sleep", "100000")) -> None:
        self.root = make_root("tmux-b-")
        self.name = name
        self.env = clean_environment()
        self.env["TMUX_TMPDIR"] = str(self.root)
        self._initial = list(initial)
        self.pid = 0

    def __enter__(self) -> Tmux:
        try:
            self.run("new-session", "-d", "-s", "bench", "-x", "80", "-y", "24", *self._initial)
            self.run("set-option", "-g", "default-size", "80x24")
            self.pid = int(self.run("display-message", "-p", "#{pid}").strip())
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def argv(self, *args: str) -> list[str]:
        """The whole command line of a tmux client running `args` against this server."""
        return ["tmux", "-L", self.name, "-f", "/dev/null", *args]

    def run(self, *args: str) -> str:
        result = subprocess.run(
            self.argv(*args),
            env=self.env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {result.stderr.strip()}")
        return result.stdout

    def close(self) -> None:
        subprocess.run(
            self.argv("kill-server"),
            env=self.env,
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
        )
        if self.pid:
            pid = self.pid
            try:
                wait_for(lambda: not _alive(pid), TIMEOUT, what="the tmux server to exit")
            except AssertionError:
                # A server with hundreds of busy panes may take longer to hang them up.
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                wait_for(lambda: not _alive(pid), TIMEOUT, what="the tmux server to die")
        shutil.rmtree(self.root, ignore_errors=True)


def ends_own_block(line: bytes) -> bool:
    """`%end`/`%error TIME NUMBER FLAGS` closing a command this client sent (FLAGS 1).

    The attach itself is answered by a block with FLAGS 0, and it may come
    after the first commands' blocks.
    """
    fields = line.split()
    return len(fields) == 4 and fields[0] in (b"%end", b"%error") and fields[3] == b"1"


class TmuxControl:
    """`tmux -C attach`: a client that stays connected (tmux's own warm client), commands
    on stdin, each answered by a %begin … %end block. `flags` go to attach-session -f
    (e.g. "no-output": no %output notifications for the panes' output)."""

    def __init__(self, tmux: Tmux, flags: str = "") -> None:
        extra = ["-f", flags] if flags else []
        self.process = subprocess.Popen(
            tmux.argv("-C", "attach-session", "-t", "bench", *extra),
            env=tmux.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in = self.process.stdin.fileno()
        self._out = self.process.stdout.fileno()
        self._buffer = b""
        self._send("display-message -p bench-ready")
        while self._line() != b"bench-ready":
            pass
        self._until_end()

    def _send(self, command: str) -> None:
        os.write(self._in, command.encode() + b"\n")

    def _line(self, timeout: float = TIMEOUT) -> bytes:
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([self._out], [], [], timeout)
            if not ready:
                raise TimeoutError("tmux control client said nothing")
            chunk = os.read(self._out, 65536)
            if not chunk:
                raise RuntimeError("tmux control client exited")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def _until_end(self) -> None:
        while not ends_own_block(line := self._line()):
            pass
        if line.startswith(b"%error"):
            raise RuntimeError(f"tmux control command failed: {line!r}")

    def command(self, text: str) -> list[bytes]:
        """Run one tmux command; the lines of its output block."""
        self._send(text)
        while not self._line().startswith(b"%begin"):
            pass
        lines = []
        while not ends_own_block(line := self._line()):
            lines.append(line)
        if line.startswith(b"%error"):
            raise RuntimeError(f"tmux control command failed: {text}: {lines!r}")
        return lines

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=TIMEOUT)


def _alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return False
    return fields[0] != "Z"
