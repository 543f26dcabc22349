"""Each method call sees its own caller, even an async one that awaits while others come in."""

from __future__ import annotations

import asyncio
from typing import Annotated

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus
from dbus_fast.annotations import DBusSignature
from dbus_fast.service import ServiceInterface, dbus_method

from mux.dbus.caller import CallerNotes, current_caller
from tests.harness import DEFAULT_TIMEOUT, DBusDaemon

PATH = "/test/caller"
INTERFACE = "test.mux.Caller"


class WhoIsCalling(ServiceInterface):
    """`WhoAmI` answers its caller's unique name, once the test opens the gate."""

    def __init__(self) -> None:
        super().__init__(INTERFACE)
        self.gate = asyncio.Event()
        self.waiting = 0
        self.all_waiting = asyncio.Event()
        self.expected = 0

    @dbus_method()
    async def WhoAmI(self) -> Annotated[str, DBusSignature("s")]:
        self.waiting += 1
        if self.waiting == self.expected:
            self.all_waiting.set()
        await self.gate.wait()
        return current_caller() or ""


async def _ask(client: MessageBus, service: str) -> str:
    reply = await client.call(
        Message(destination=service, path=PATH, interface=INTERFACE, member="WhoAmI")
    )
    assert reply is not None and reply.message_type is MessageType.METHOD_RETURN, reply
    return str(reply.body[0])


async def _interleaved_calls(address: str) -> tuple[list[str], list[str]]:
    service = await MessageBus(bus_address=address).connect()
    service.add_message_handler(CallerNotes().note_sender)
    interface = WhoIsCalling()
    service.export(PATH, interface)
    clients = [await MessageBus(bus_address=address).connect() for _ in range(2)]
    try:
        assert service.unique_name is not None
        interface.expected = len(clients)
        answers = [asyncio.ensure_future(_ask(c, service.unique_name)) for c in clients]
        # Both calls dispatched and awaiting before either may answer.
        await asyncio.wait_for(interface.all_waiting.wait(), DEFAULT_TIMEOUT)
        interface.gate.set()
        seen = await asyncio.wait_for(asyncio.gather(*answers), DEFAULT_TIMEOUT)
        return list(seen), [str(c.unique_name) for c in clients]
    finally:
        for bus in (service, *clients):
            bus.disconnect()


def test_async_methods_see_their_own_caller_after_awaiting(dbus_daemon: DBusDaemon) -> None:
    seen, callers = asyncio.run(_interleaved_calls(dbus_daemon.address))
    assert seen == callers
    assert callers[0] != callers[1]
