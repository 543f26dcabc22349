"""Each D-Bus contract is declared once, and what is served is what was declared:
the Manager's methods (mux.protocol.dbus_methods), the pane's properties and
ListPanes keys (mux.dbus.pane_iface.PANE_FIELDS)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from jeepney.io.blocking import open_dbus_connection

from mux.dbus.manager_iface import ManagerInterface
from mux.dbus.pane_iface import (
    PANE_FIELDS,
    PANE_INTERFACE_DESCRIPTION,
    PANE_PROPERTIES,
    ListEntries,
    pane_objects,
)
from mux.panes.pane import Pane, PaneState
from mux.protocol.dbus_methods import MANAGER_METHODS
from mux.protocol.names import MANAGER_INTERFACE
from muxctl.client import MuxClient
from tests.harness import DBusDaemon


class StandInPane:
    id = 7
    pid = 4242
    argv = ("sh", "-c", "true")
    cwd = "/tmp"
    cwd_source = "shell"
    title = "a title"
    window = 3
    state: str = PaneState.RUNNING
    exit_status = 0
    rows = 24
    cols = 80
    unseen_notice = ""
    shell_state = "prompt"
    last_command = None
    last_command_status: int | None = None


def _signature(args: list[Any]) -> str:
    return "".join(arg.signature for arg in args)


def test_the_exported_manager_methods_are_the_declared_ones() -> None:
    exported = ManagerInterface(cast(Any, None)).introspect()
    methods = {m.name: (_signature(m.in_args), _signature(m.out_args)) for m in exported.methods}
    declared = {name: (s.takes, s.returns) for name, s in MANAGER_METHODS.items()}
    assert methods == declared


def test_the_served_pane_properties_are_the_declared_ones() -> None:
    declared = {name: field.signature for name, field in PANE_PROPERTIES.items()}
    served = pane_objects({7: cast(Pane, StandInPane())}).properties(7)
    assert served is not None
    assert {name: value.signature for name, value in served.items()} == declared
    described = PANE_INTERFACE_DESCRIPTION.properties
    assert {p.name: p.signature for p in described} == declared
    assert all(p.access.readable() and not p.access.writable() for p in described)


def test_a_list_entry_has_every_field_under_its_key() -> None:
    entry = ListEntries().entry(cast(Pane, StandInPane()))
    assert list(entry) == [field.key for field in PANE_FIELDS]
    assert entry["cwd_source"] == Variant("s", "shell")
    assert entry["argv"] == Variant("as", ["sh", "-c", "true"])
    assert entry["command"] == Variant("s", "")
    assert entry["command_status"] == Variant("i", -1)


async def _calls_seen(address: str, calls: list[tuple[str, str | None, list[Any]]]) -> list[Any]:
    """The messages muxctl's client sends for `calls`, as a peer on a real bus receives
    them (muxctl's client blocks: it runs in a thread while the peer answers)."""
    seen: list[Any] = []

    def answer(message: Message) -> Message | None:
        if message.message_type is not MessageType.METHOD_CALL:
            return None
        seen.append(message)
        return Message.new_method_return(message)

    peer = await MessageBus(bus_address=address).connect()
    peer.add_message_handler(answer)
    client = MuxClient(open_dbus_connection(bus=address), cast(Any, None))

    def call_all() -> None:
        for member, signature, body in calls:
            client.call(member, signature, body, destination=str(peer.unique_name))

    try:
        await asyncio.get_running_loop().run_in_executor(None, call_all)
    finally:
        client.close()
        peer.disconnect()
    return seen


def test_muxctl_takes_manager_signatures_from_the_declaration(dbus_daemon: DBusDaemon) -> None:
    calls: list[tuple[str, str | None, list[Any]]] = [
        ("KillIf", None, [1, b"", ["idle"]]),
        ("Resize", "tqq", [1, 2, 3]),  # the same, spelled: fine
    ]
    kill_if, resize = asyncio.run(_calls_seen(dbus_daemon.address, calls))
    assert (kill_if.interface, kill_if.member, kill_if.signature) == (
        MANAGER_INTERFACE,
        "KillIf",
        "tayas",
    )
    assert kill_if.body == [1, b"", ["idle"]]
    assert resize.signature == "tqq"
    with pytest.raises(ValueError, match="Resize"):
        asyncio.run(_calls_seen(dbus_daemon.address, [("Resize", "tuu", [1, 2, 3])]))


def test_list_entries_are_reused_only_while_nothing_changed() -> None:
    pane = StandInPane()
    entries = ListEntries()
    first = entries.entry(cast(Pane, pane))
    assert first == ListEntries().entry(cast(Pane, pane)), "as a fresh entry is"
    assert entries.entry(cast(Pane, pane)) is first, "nothing changed: the same entry"
    pane.title = "renamed"
    renamed = entries.entry(cast(Pane, pane))
    assert renamed is not first and renamed["title"] == Variant("s", "renamed")
    pane.state = PaneState.EXITED
    pane.last_command_status = 3
    exited = entries.entry(cast(Pane, pane))
    assert exited["state"] == Variant("s", "exited")
    assert exited["command_status"] == Variant("i", 3)
    assert entries.entry(cast(Pane, pane)) is exited
    pane.argv = ("sh", "-x")
    assert entries.entry(cast(Pane, pane))["argv"] == Variant("as", ["sh", "-x"])
