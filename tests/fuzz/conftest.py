"""What the fuzz tests share: how many examples, a muxd set up so that nothing a fuzzed call
asks for can run a real program or reach the network, a D-Bus client on the test's bus,
muxd's log read piece by piece, and the figures printed at the end of the run."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections import Counter
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from dbus_fast import Message
from dbus_fast.aio import MessageBus

from tests.harness import DEFAULT_TIMEOUT, DBusDaemon, Service, temp_root

T = TypeVar("T")

# `MUX_FUZZ_EXAMPLES=100000 scripts/test tests/fuzz` for a long run; the default keeps the
# fuzz tests within about a minute on a small machine.
DEFAULT_EXAMPLES = {"dbus": 200, "decoder": 100, "socket": 50}

# Every program the fuzzed calls could make muxd start is harmless: shell launches run
# /bin/true (the fuzz test turns the `argv` and `shell` options into harmless ones too),
# a search result opens /bin/true instead of a terminal, a host's link runs /bin/false
# instead of ssh (no network). Notifications are off: no desktop is on the test's bus.
# The emulator budget keeps fuzzed Resizes from taking the machine's memory.
FUZZ_CONFIG = """\
default_shell = "/bin/true"
terminal_command = ["/bin/true"]
ssh_command = ["/bin/false"]
notifications = false
kill_grace_seconds = 0.5
cwd_sample_seconds = 60
emulator_cells_budget = 2000000

[hosts.fuzzhost]
destination = "nowhere.invalid"
"""

# Words the service knows: signal names, split directions, the KillIf condition, KRunner's
# action, option names; interface and property names come from the introspection.
WORDS = (
    "TERM",
    "sigint",
    "HUP",
    "KILL",
    "STOP",
    "CONT",
    "WINCH",
    "SIGUSR1",
    "RTMIN",
    "horizontal",
    "vertical",
    "UNATTACHED_SINCE_SPAWN",
    "kill",
    "fuzzhost",  # FUZZ_CONFIG's host
    "host_1",
    "me@nowhere.invalid",
    "-oProxyCommand=touch /tmp/mux-fuzz-pwned",
)
# Option names of Spawn, SplitPane, SetWindow (and its geometry) and AddHost, with the type
# each is declared with (docs/dbus-api.md#spawn-options, docs/windows.md, docs/federation.md).
OPTIONS = {
    "argv": "as",
    "shell": "s",
    "cwd": "s",
    "env": "a{ss}",
    "title": "s",
    "window": "t",
    "rows": "q",
    "cols": "q",
    "bind_instance": "b",
    "resurrection": "b",
    "geometry": "a{sv}",
    "layout": "s",
    "focused_pane": "t",
    "x": "i",
    "y": "i",
    "width": "u",
    "height": "u",
    "monitor": "s",
    "destination": "s",
    "muxctl": "s",
}
# What a traceback or an exception escaping asyncio leaves in muxd's log.
LOG_FAULTS = (
    "Traceback",
    "Fatal error",
    "exception was never retrieved",
    "Exception in callback",
    "Unhandled error",
)

FIGURES: Counter[str] = Counter()  # examples, calls, ... over the whole run
NOTES: list[str] = []  # what else the run saw that a person should read (slow calls)


def examples(kind: str) -> int:
    """The number of hypothesis examples of one fuzz test: MUX_FUZZ_EXAMPLES if set."""
    return int(os.environ.get("MUX_FUZZ_EXAMPLES") or DEFAULT_EXAMPLES[kind])


def time_limit(kind: str) -> pytest.MarkDecorator:
    """pytest-timeout's limit for a fuzz test: the suite's 120 s, more for a long run."""
    return pytest.mark.timeout(max(120, examples(kind)))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if FIGURES:
        terminalreporter.write_sep("-", "fuzz figures")
        for name, count in sorted(FIGURES.items()):
            terminalreporter.write_line(f"{name}: {count}")
        for note in NOTES[:50]:
            terminalreporter.write_line(note)


class LogWatch:
    """muxd's log from where it was last read: what a batch of calls made it write."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self._offset = 0
        self.skip()

    def skip(self) -> None:
        self._offset = len(self.service.log_path.read_bytes())

    def new_faults(self) -> str:
        """The lines written since the last call, if a fault shows in them; else ""."""
        data = self.service.log_path.read_bytes()
        new = data[self._offset :].decode(errors="replace")
        self._offset = len(data)
        return new if any(fault in new for fault in LOG_FAULTS) else ""


class FuzzBus:
    """A dbus-fast connection to the test's bus, in a thread of its own, called
    synchronously from the test: one call at a time, each with a deadline."""

    def __init__(self, address: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._bus = self._run(self._connect(address), DEFAULT_TIMEOUT)

    @staticmethod
    async def _connect(address: str) -> MessageBus:
        # dbus-fast's bus takes the running loop when it is made: it is made in the thread's.
        return await MessageBus(bus_address=address, negotiate_unix_fd=True).connect()

    def _run(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        future = asyncio.run_coroutine_threadsafe(asyncio.wait_for(coroutine, timeout), self._loop)
        return future.result(timeout + 5)

    def call(self, message: Message, timeout: float = DEFAULT_TIMEOUT) -> Message:
        """The reply; TimeoutError if muxd does not answer within `timeout` seconds."""
        reply = self._run(self._bus.call(message), timeout)
        assert reply is not None
        return reply

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._bus.disconnect)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(DEFAULT_TIMEOUT)
        self._loop.close()


@pytest.fixture(scope="module")
def fuzz_service(dbus_daemon: DBusDaemon) -> Iterator[Service]:
    """One muxd for a whole fuzz module (hypothesis runs each example on the same one)."""
    with temp_root() as root:
        service = Service(root, bus_address=dbus_daemon.address, config=FUZZ_CONFIG).start()
        try:
            yield service
        finally:
            service.stop()
            for pid in service.own_processes():  # nothing it started outlives the test
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def fuzz_bus(fuzz_service: Service) -> Iterator[FuzzBus]:
    bus = FuzzBus(fuzz_service.bus_address)
    yield bus
    bus.close()
