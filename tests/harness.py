"""Test harness: a real dbus-daemon, a real muxd process, and ways to talk to them.

Every muxd gets its own XDG directories (runtime, state, config, home), so
tests never see each other's panes or files. Waiting is always for a
condition with a deadline, never for a guessed time.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_TIMEOUT = 15.0


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


class DBusDaemon:
    """A private session-type dbus-daemon listening on a socket in a temp dir."""

    def __init__(self, directory: Path) -> None:
        self.socket_path = directory / "test-bus"
        self.address = f"unix:path={self.socket_path}"
        self.process = subprocess.Popen(
            [
                "dbus-daemon",
                "--session",
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
    ) -> None:
        self.root = root
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
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("MUX_", "DBUS_", "XDG_", "LISTEN_", "NOTIFY_", "WATCHDOG_"))
        }
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
        self.process: subprocess.Popen[bytes] | None = None

    # -- lifecycle ------------------------------------------------------------

    def start(self, wait: bool = True) -> Service:
        log = open(self.log_path, "ab")  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mux"],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd="/",
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
            return "ready:" in self.log()

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
        return self.process.returncode

    # -- talking to it --------------------------------------------------------

    def muxctl(
        self, *args: str, check: bool = False, input: bytes | None = None, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, "-m", "muxctl", *args],
            env=self.env,
            input=input.decode() if input is not None else None,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"muxctl {' '.join(args)} exited {result.returncode}: {result.stderr}"
            )
        return result

    def busctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            ["busctl", f"--address={self.bus_address}", "--", *args],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"busctl {' '.join(args)} failed: {result.stderr}")
        return result

    def gdbus_call(self, method: str, *args: str, path: str = "/org/mux/Mux1",
                   check: bool = True) -> subprocess.CompletedProcess[str]:
        """`method` is fully qualified, e.g. org.mux.Mux1.Manager.Spawn."""
        result = subprocess.run(
            ["gdbus", "call", "--address", self.bus_address, "--dest", "org.mux.Mux1",
             "--object-path", path, "--method", method, *args],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"gdbus {method} failed: {result.stderr}")
        return result

    def call(self, member: str, signature: str = "", body: list[Any] | None = None,
             **kwargs: Any) -> list[Any]:
        """One method call through our own client library; raises RemoteError on refusal."""
        env_backup = dict(os.environ)
        os.environ.clear()
        os.environ.update(self.env)
        try:
            return asyncio.run(_call(member, signature, body or [], kwargs))
        finally:
            os.environ.clear()
            os.environ.update(env_backup)

    def spawn(self, argv: list[str] | None = None, **options: Any) -> int:
        """Spawn through our client; options are (signature, value) pairs or plain values."""
        from dbus_fast import Variant

        types = {"cwd": "s", "title": "s", "window": "t", "rows": "q", "cols": "q",
                 "env": "a{ss}", "shell": "s", "bind_instance": "b", "resurrection": "b"}
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

        return wait_for(
            shown,
            timeout,
            what=f"{needle!r} on the screen of pane {pane_id}",
        )

    def wait_exited(self, pane_id: int, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        return wait_for(
            lambda: (p := self.panes().get(pane_id)) and p["state"] == "exited" and p,
            timeout,
            what=f"pane {pane_id} to exit",
        )


async def _call(member: str, signature: str, body: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    from muxctl.client import connect

    client = await connect(autostart=False)
    try:
        return await client.call(member, signature, body, **kwargs)
    finally:
        client.close()


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
    except FileNotFoundError:
        return False
    return fields[0] != "Z"
