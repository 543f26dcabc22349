"""muxd's bus connection: a reply that carries no fd skips dbus-fast's fd scan, one
that carries an fd still gets it, and the connection's fd flag survives both."""

from __future__ import annotations

import asyncio
import os
from typing import Annotated, Any

import pytest
from dbus_fast import Message, MessageType, Variant
from dbus_fast import service as dbus_fast_service
from dbus_fast.aio import MessageBus
from dbus_fast.annotations import DBusSignature
from dbus_fast.service import ServiceInterface, dbus_method, dbus_signal

from mux.system.dbus_service_bus import ObjectManagerBus
from tests.harness import DBusDaemon

PATH = "/test/Scan"
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
            describe=lambda _: None,
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


class _Signals(ServiceInterface):
    def __init__(self) -> None:
        super().__init__(INTERFACE)

    @dbus_signal()
    def Changed(self, value: int) -> Annotated[int, DBusSignature("t")]:
        return value


def test_a_signal_is_sent_from_its_path_without_walking_every_export() -> None:
    asyncio.run(_a_signal_is_sent_from_its_path())


async def _a_signal_is_sent_from_its_path() -> None:
    bus = ObjectManagerBus(
        "unix:path=/nonexistent", manager_path="/test", describe=lambda _interface: None
    )
    sent: list[Message] = []
    bus.send = sent.append  # type: ignore[method-assign,assignment]
    interfaces = [_Signals() for _ in range(3)]
    for n, interface in enumerate(interfaces):
        bus.export(f"/test/o{n}", interface)
    bus.unexport("/test/o0")
    # Out of the exports dbus-fast would walk (it would not find the path there):
    # the path kept at export is the one used.
    hidden = bus._path_exports.pop("/test/o2")
    interfaces[2].Changed(7)
    bus._path_exports["/test/o2"] = hidden
    assert [(m.path, m.member, m.body) for m in sent] == [("/test/o2", "Changed", [7])]
    bus.unexport("/test/o2", interfaces[2])
    assert bus._path_of == {id(interfaces[1]): "/test/o1"}  # (what is unexported is forgotten)
