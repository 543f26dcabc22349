"""Desktop peers for the tests (DESIGN.md): python-dbusmock's notification daemon and
logind on private buses, each a process of its own (Debian's python3-dbusmock runs on
the system Python)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from tests.harness import DBusDaemon, Service, wait_for

SYSTEM_PYTHON = "/usr/bin/python3"
NOTIFICATIONS = "org.freedesktop.Notifications"
NOTIFICATIONS_PATH = "/org/freedesktop/Notifications"
MOCK = "org.freedesktop.DBus.Mock"


def _why_not() -> str | None:
    if not os.path.exists(SYSTEM_PYTHON):
        return f"{SYSTEM_PYTHON} is not there"
    check = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import dbusmock"], capture_output=True, check=False
    )
    if check.returncode != 0:
        return "python3-dbusmock is not installed (apt-get install python3-dbusmock)"
    return None


class MockProcess:
    """`python3 -m dbusmock --template TEMPLATE` on the bus at `address`."""

    def __init__(self, address: str, template: str, name: str, path: str, *, system: bool) -> None:
        reason = _why_not()
        if reason is not None:
            print(f"SKIPPED desktop tests: {reason}")
            pytest.skip(reason)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        env["DBUS_SYSTEM_BUS_ADDRESS" if system else "DBUS_SESSION_BUS_ADDRESS"] = address
        flag = "--system" if system else "--session"
        self.address, self.name, self.path = address, name, path
        self.process = subprocess.Popen(
            [SYSTEM_PYTHON, "-m", "dbusmock", flag, "--template", template],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(self._owned, what=f"the {template} mock to own {name}")

    def _owned(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"dbusmock exited with {self.process.returncode}")
        out = subprocess.run(
            ["busctl", f"--address={self.address}", "list", "--no-legend"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        return any(line.split()[:1] == [self.name] for line in out.splitlines())

    def call(
        self, member: str, signature: str = "", *body: Any, interface: str = MOCK
    ) -> list[Any]:
        message = Message(
            destination=self.name,
            path=self.path,
            interface=interface,
            member=member,
            signature=signature,
            body=list(body),
        )
        return asyncio.run(_call(self.address, message))

    def calls(self, method: str) -> list[list[Any]]:
        """The arguments of every call of `method` the mock received, in order."""
        (recorded,) = self.call("GetCalls")
        return [[arg.value for arg in args] for _when, name, args in recorded if name == method]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


async def _call(address: str, message: Message) -> list[Any]:
    bus = await MessageBus(bus_address=address).connect()
    try:
        reply = await bus.call(message)
        assert reply is not None and reply.message_type is MessageType.METHOD_RETURN, reply
        return list(reply.body)
    finally:
        bus.disconnect()


@dataclass
class NotificationBus:
    bus: DBusDaemon
    server: MockProcess

    def notifications(self) -> list[dict[str, Any]]:
        """Each Notify: its app name, summary, body, actions and hints."""
        return [
            {
                "app": args[0],
                "summary": args[3],
                "body": args[4],
                "actions": list(args[5]),
                "hints": {k: v.value for k, v in args[6].items()},
            }
            for args in self.server.calls("Notify")
        ]


@pytest.fixture
def notification_bus(tmp_path: Path) -> Iterator[NotificationBus]:
    """A session bus of its own with dbusmock's notification daemon on it."""
    directory = tmp_path / "notify-bus"
    directory.mkdir()
    bus = DBusDaemon(directory)
    try:
        server = MockProcess(
            bus.address, "notification_daemon", NOTIFICATIONS, NOTIFICATIONS_PATH, system=False
        )
        try:
            yield NotificationBus(bus, server)
        finally:
            server.stop()
    finally:
        bus.stop()


def recorder_script(directory: Path) -> tuple[Path, Path]:
    """A program that records its argv, one per line, in a file: the "terminal"."""
    record = directory / "terminal-argv"
    script = directory / "fake-terminal"
    write = f'printf "%s\\n" "$@" > {record}.tmp && mv {record}.tmp {record}'
    script.write_text(f"#!/bin/sh\n{write}\n")
    script.chmod(0o755)
    assert shutil.which("sh")
    return script, record


# What the notification tests run muxd with.
CONFIG = "notify_command_seconds = 1\nnotify_min_interval_seconds = 5\n"


def notifying_service(
    root: Path, bus: NotificationBus, config: str = CONFIG, terminal: Path | None = None
) -> Service:
    if terminal is not None:
        config += f"terminal_command = [{json.dumps(str(terminal))}]\n"
    return Service(root, bus_address=bus.bus.address, config=config)


@pytest.fixture
def notified(tmp_path: Path, notification_bus: NotificationBus) -> Iterator[tuple[Service, Path]]:
    terminal, record = recorder_script(tmp_path)
    root = tmp_path / "mux"
    root.mkdir()
    service = notifying_service(root, notification_bus, terminal=terminal).start()
    try:
        yield service, record
    finally:
        service.stop()
