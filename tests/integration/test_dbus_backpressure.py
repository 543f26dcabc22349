"""A bus daemon that stops reading: muxd's outgoing queue stays bounded, and the
connection survives to deliver what was never dropped once the daemon reads again."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import pytest
from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus
from dbus_fast.annotations import DBusSignature
from dbus_fast.service import ServiceInterface, dbus_signal

from mux.system.dbus_adapter import SIGNAL_QUEUE_BOUND, outgoing_queue, tolerate_full_socket
from tests.harness import DEFAULT_TIMEOUT, DBusDaemon

BLOB = "x" * (64 << 10)


class Chatty(ServiceInterface):
    def __init__(self) -> None:
        super().__init__("test.mux.Chatty")

    @dbus_signal()
    def Blob(self, text: str) -> Annotated[str, DBusSignature("s")]:
        return text


def _queued_bytes(bus: MessageBus) -> int:
    return sum(len(message[0]) for message in outgoing_queue(bus))


async def _until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(DEFAULT_TIMEOUT):
        while not condition():
            await asyncio.sleep(0.005)  # poll interval, not a guess at the event's duration


def _get_id() -> Message:
    return Message(
        destination="org.freedesktop.DBus",
        path="/org/freedesktop/DBus",
        interface="org.freedesktop.DBus",
        member="GetId",
    )


async def _flood_a_stopped_bus(daemon: DBusDaemon) -> tuple[int, int, str]:
    bus = tolerate_full_socket(await MessageBus(bus_address=daemon.address).connect())
    chatty = Chatty()
    bus.export("/test/chatty", chatty)
    os.kill(daemon.process.pid, signal.SIGSTOP)
    try:
        emitted = 0
        # Well past the bound, while the socket is full.
        while emitted * len(BLOB) < 3 * SIGNAL_QUEUE_BOUND:
            chatty.Blob(BLOB)
            emitted += 1
            await asyncio.sleep(0)  # the writer gets its turns
        high_water = _queued_bytes(bus)
        # A method call is never dropped, whatever the queue holds.
        answer = asyncio.ensure_future(bus.call(_get_id()))
        await asyncio.sleep(0)
        assert _queued_bytes(bus) > high_water
    finally:
        os.kill(daemon.process.pid, signal.SIGCONT)
    reply = await asyncio.wait_for(answer, DEFAULT_TIMEOUT)
    assert reply is not None and reply.message_type is MessageType.METHOD_RETURN
    await _until(lambda: _queued_bytes(bus) == 0)  # and the queue drains
    bus.disconnect()
    return high_water, emitted, str(reply.body[0])


def test_the_outgoing_queue_stays_bounded_while_the_bus_does_not_read(
    tmp_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    daemon = DBusDaemon(tmp_root)
    try:
        with caplog.at_level(logging.WARNING, logger="mux.system.dbus_adapter"):
            high_water, emitted, bus_id = asyncio.run(_flood_a_stopped_bus(daemon))
    finally:
        daemon.stop()
    assert emitted * len(BLOB) >= 3 * SIGNAL_QUEUE_BOUND
    assert high_water <= SIGNAL_QUEUE_BOUND
    assert bus_id
    drops = [r for r in caplog.records if "dropped" in r.getMessage()]
    assert len(drops) == 1, "one log line per episode"
