"""muxd's bus connection: a reply that carries no fd skips dbus-fast's fd scan, one
that carries an fd still gets it, and the connection's fd flag survives both; served
objects (mux.system.dbus_property_objects) sit beside exported ones, announced from
the manager's path."""

from __future__ import annotations

import asyncio
import os
from typing import Annotated, Any

import pytest
from dbus_fast import Message, MessageType, Variant
from dbus_fast import introspection as intr
from dbus_fast import service as dbus_fast_service
from dbus_fast.aio import MessageBus
from dbus_fast.annotations import DBusSignature
from dbus_fast.service import ServiceInterface, dbus_method, dbus_signal

from mux.system.bus_daemon import bus_daemon_message
from mux.system.dbus_property_objects import PropertyObjects, read_only_interface
from mux.system.dbus_service_bus import ObjectManagerBus
from tests.harness import DBusDaemon
from tests.loop_support import until

PATH = "/test/Scan"
PROPERTIES = "org.freedesktop.DBus.Properties"
INTERFACE = "test.Scan"


class _Scanned(ServiceInterface):
    def __init__(self) -> None:
        super().__init__(INTERFACE)

    @dbus_method()
    def Entries(self) -> Annotated[list[dict[str, Variant]], DBusSignature("aa{sv}")]:
        return [{"id": Variant("t", n), "argv": Variant("as", ["sleep", "1"])} for n in range(3)]

    @dbus_method()
    def Fd(self) -> Annotated[int, DBusSignature("h")]:
        return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)

    @dbus_method()
    def Fails(self) -> Annotated[str, DBusSignature("s")]:
        raise ValueError("on purpose")


def _call(client: MessageBus, name: str, member: str) -> Any:
    return client.call(Message(destination=name, path=PATH, interface=INTERFACE, member=member))


def test_only_a_reply_that_can_carry_an_fd_is_scanned(
    dbus_daemon: DBusDaemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    scanned: list[str] = []
    real_scan = dbus_fast_service.replace_fds_with_idx

    def counting_scan(signature: Any, body: list[Any]) -> Any:
        scanned.append(str(getattr(signature, "signature", signature)))
        return real_scan(signature, body)

    monkeypatch.setattr(dbus_fast_service, "replace_fds_with_idx", counting_scan)

    async def run() -> None:
        server = ObjectManagerBus(
            dbus_daemon.address,
            manager_path="/test",
            negotiate_unix_fd=True,
        )
        await server.connect()
        client = await MessageBus(bus_address=dbus_daemon.address, negotiate_unix_fd=True).connect()
        try:
            server.export(PATH, _Scanned())
            name = server.unique_name
            assert name is not None
            entries = await _call(client, name, "Entries")
            assert entries.message_type is MessageType.METHOD_RETURN
            assert [e["id"].value for e in entries.body[0]] == [0, 1, 2]
            assert entries.body[0][0]["argv"].value == ["sleep", "1"]
            assert scanned == []  # aa{sv}: no scan
            failed = await _call(client, name, "Fails")
            assert failed.message_type is MessageType.ERROR
            assert server._negotiate_unix_fd is True  # restored, after a failure too
            fd = await _call(client, name, "Fd")
            assert fd.message_type is MessageType.METHOD_RETURN and len(fd.unix_fds) == 1
            assert scanned == ["h"]
            for received in fd.unix_fds:
                os.close(received)
        finally:
            client.disconnect()
            server.disconnect()

    asyncio.run(run())


class _Exported(ServiceInterface):
    def __init__(self) -> None:
        super().__init__(INTERFACE)

    @dbus_signal()
    def Changed(self, value: int) -> Annotated[int, DBusSignature("t")]:
        return value


SERVED = "test.Served"


def _served(values: dict[int, str]) -> PropertyObjects:
    def properties(object_id: int) -> dict[str, Variant] | None:
        value = values.get(object_id)
        return None if value is None else {"Name": Variant("s", value)}

    interface = read_only_interface(SERVED, [("Name", "s")])
    return PropertyObjects("/test/served", interface, values.keys, properties)


def test_served_objects_beside_exported_ones(dbus_daemon: DBusDaemon) -> None:
    asyncio.run(_served_objects_beside_exported_ones(dbus_daemon.address))


async def _served_objects_beside_exported_ones(address: str) -> None:
    server = ObjectManagerBus(address, manager_path="/test")
    await server.connect()
    client = await MessageBus(bus_address=address).connect()
    seen: list[Message] = []

    def note(message: Message) -> None:
        if message.message_type is MessageType.SIGNAL and message.sender == server.unique_name:
            seen.append(message)

    client.add_message_handler(note)
    await client.call(
        bus_daemon_message("AddMatch", "s", [f"type='signal',sender='{server.unique_name}'"])
    )
    values = {1: "one"}
    objects = _served(values)
    try:
        server.serve(objects)
        exported = _Exported()
        server.export("/test/exported", exported)
        values[2] = "two"
        server.object_added(objects, 2)
        server.properties_changed(objects, 2, {"Name": Variant("s", "deux")})
        exported.Changed(7)  # an exported interface's signal, from its own path
        server.object_removed(objects, 1)

        def call(
            path: str, interface: str, member: str, signature: str = "", body: Any = ()
        ) -> Any:
            message = Message(
                destination=server.unique_name,
                path=path,
                interface=interface,
                member=member,
                signature=signature,
                body=list(body),
            )
            return client.call(message)

        managed = await call("/test", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        assert set(managed.body[0]) == {"/test/exported", "/test/served/1", "/test/served/2"}
        assert managed.body[0]["/test/served/2"] == {SERVED: {"Name": Variant("s", "two")}}
        introspect = "org.freedesktop.DBus.Introspectable"
        root = intr.Node.parse((await call("/test", introspect, "Introspect")).body[0])
        assert {node.name for node in root.nodes} == {"exported", "served"}
        parent = intr.Node.parse((await call("/test/served", introspect, "Introspect")).body[0])
        assert {node.name for node in parent.nodes} == {"1", "2"}
        leaf = intr.Node.parse((await call("/test/served/2", introspect, "Introspect")).body[0])
        assert SERVED in {interface.name for interface in leaf.interfaces}
        got = await call("/test/served/2", PROPERTIES, "Get", "ss", [SERVED, "Name"])
        assert got.body == [Variant("s", "two")]
        await until(lambda: len(seen) >= 4, "four signals seen", timeout=10)
    finally:
        client.disconnect()
        server.disconnect()
    signals = [(m.path, m.member, m.body[0]) for m in seen]
    assert signals == [
        ("/test", "InterfacesAdded", "/test/served/2"),
        ("/test/served/2", "PropertiesChanged", SERVED),
        ("/test/exported", "Changed", 7),
        ("/test", "InterfacesRemoved", "/test/served/1"),
    ]
