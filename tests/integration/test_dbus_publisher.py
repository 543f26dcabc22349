"""What the bus sees of pane changes: one PropertiesChanged per pane and loop turn,
with the latest values, in order with the pane's other signals.

The publisher is driven directly, with a stand-in pane (the values a Pane
exposes), on a real dbus-daemon; a second connection observes the signals.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from dbus_fast import Message
from dbus_fast.aio import MessageBus

from mux.dbus.caller import CallerNotes
from mux.dbus.connection import prepare_connection
from mux.dbus.manager_iface import ManagerInterface
from mux.dbus.publisher import BusPublisher, MuxMessageBus
from mux.panes.pane import Pane
from mux.protocol.names import PANE_INTERFACE, ROOT_PATH, pane_path
from mux.system.bus_daemon import bus_daemon_message
from tests.harness import DEFAULT_TIMEOUT, DBusDaemon

PROPERTIES = "org.freedesktop.DBus.Properties"


@dataclass
class StandInPane:
    id: int
    title: str = "start"
    pid: int = 4242
    argv: list[str] = field(default_factory=lambda: ["sh"])
    cwd: str = "/"
    cwd_source: str = "launch"
    window: int = 1
    state: str = "running"
    exit_status: int = 0
    rows: int = 24
    cols: int = 80
    unseen_notice: str = ""
    shell_state: str = ""
    last_command: str | None = None
    last_command_status: int | None = None


class Observer:
    """Records every signal the service connection sends, in order of arrival."""

    def __init__(self) -> None:
        self.signals: list[Message] = []
        self._arrived = asyncio.Event()

    async def connect(self, address: str, sender: str) -> MessageBus:
        bus = await MessageBus(bus_address=address).connect()
        bus.add_message_handler(self._record)
        await bus.call(bus_daemon_message("AddMatch", "s", [f"type='signal',sender='{sender}'"]))
        return bus

    def _record(self, message: Message) -> None:
        if message.sender != "org.freedesktop.DBus":
            self.signals.append(message)
            self._arrived.set()

    async def wait_for(self, found: Callable[[Message], bool]) -> None:
        async with asyncio.timeout(DEFAULT_TIMEOUT):
            while not any(found(m) for m in self.signals):
                self._arrived.clear()
                await self._arrived.wait()


def _titles(signals: list[Message], path: str) -> list[str]:
    return [
        m.body[1]["Title"].value
        for m in signals
        if m.member == "PropertiesChanged" and m.path == path and "Title" in m.body[1]
    ]


async def _publish(address: str, scenario: Callable[..., Any]) -> list[Message]:
    service = prepare_connection(await MuxMessageBus(bus_address=address).connect(), CallerNotes())
    manager = ManagerInterface(cast(Any, None))
    service.export(ROOT_PATH, manager)
    publisher = BusPublisher(service, manager)
    observer = Observer()
    assert service.unique_name is not None
    watcher = await observer.connect(address, service.unique_name)
    try:
        await scenario(publisher, observer)
        return observer.signals
    finally:
        watcher.disconnect()
        service.disconnect()


def test_ten_thousand_title_changes_in_one_turn_make_one_signal(dbus_daemon: DBusDaemon) -> None:
    pane = StandInPane(id=1)
    path = pane_path(1)

    async def scenario(publisher: BusPublisher, observer: Observer) -> None:
        publisher.pane_added(cast(Pane, pane))
        for n in range(10_000):  # all in this one loop turn
            pane.title = f"title {n}"
            publisher.pane_changed(cast(Pane, pane), ("Title",))
        await asyncio.sleep(0)  # the next turn: a change of its own
        pane.title = "sentinel"
        publisher.pane_changed(cast(Pane, pane), ("Title",))
        await observer.wait_for(lambda m: m.path == path and "sentinel" in str(m.body))

    signals = asyncio.run(_publish(dbus_daemon.address, scenario))
    assert _titles(signals, path) == ["title 9999", "sentinel"]
    (changed, _sentinel) = [m for m in signals if m.member == "PropertiesChanged"]
    assert changed.body[0] == PANE_INTERFACE and changed.body[2] == []


def test_changes_of_a_turn_are_sent_together_and_before_the_exit(
    dbus_daemon: DBusDaemon,
) -> None:
    pane = StandInPane(id=2)
    path = pane_path(2)

    async def scenario(publisher: BusPublisher, observer: Observer) -> None:
        publisher.pane_added(cast(Pane, pane))
        pane.title, pane.rows, pane.cols = "resized", 30, 100
        publisher.pane_changed(cast(Pane, pane), ("Title",))
        publisher.pane_changed(cast(Pane, pane), ("Rows", "Cols"))
        publisher.pane_changed(cast(Pane, pane), ("Checkpoint",))  # not a D-Bus property
        pane.state, pane.exit_status = "exited", 3
        publisher.pane_changed(cast(Pane, pane), ("State", "ExitStatus"))
        publisher.pane_exited(cast(Pane, pane))
        publisher.pane_removed(cast(Pane, pane))
        await observer.wait_for(lambda m: m.member == "InterfacesRemoved")

    signals = asyncio.run(_publish(dbus_daemon.address, scenario))
    members = [m.member for m in signals]
    assert members == ["InterfacesAdded", "PropertiesChanged", "PaneExited", "InterfacesRemoved"]
    changed = signals[1]
    assert changed.path == path
    assert {name: v.value for name, v in changed.body[1].items()} == {
        "Cols": 100,
        "ExitStatus": 3,
        "Rows": 30,
        "State": "exited",
        "Title": "resized",
    }
    assert signals[2].body == [2, 3]
    assert signals[0].path == signals[3].path == ROOT_PATH
