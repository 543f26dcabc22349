"""The dbus-fast adapter: every private part of dbus-fast it lists is there, and the
outgoing queue drops signals, never replies, past its bound."""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

import pytest
from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from mux.system.dbus_adapter import (
    DBUS_FAST_PRIVATES,
    DbusFastChanged,
    DbusFastPrivate,
    OutgoingQueue,
    QueuedMessage,
    outgoing_queue,
    private_problems,
    tolerate_full_socket,
)
from tests.harness import DBusDaemon

T = TypeVar("T")


@asynccontextmanager
async def _connected(address: str) -> AsyncIterator[MessageBus]:
    bus = await MessageBus(bus_address=address).connect()
    try:
        yield bus
    finally:
        bus.disconnect()


def _with_bus(address: str, check: Callable[[MessageBus], T]) -> T:
    async def run() -> T:
        async with _connected(address) as bus:
            return check(bus)

    return asyncio.run(run())


@pytest.mark.parametrize("private", DBUS_FAST_PRIVATES, ids=lambda p: p.name)
def test_each_listed_private_is_in_the_installed_dbus_fast(
    dbus_daemon: DBusDaemon, private: DbusFastPrivate
) -> None:
    name = private.name
    problems = _with_bus(dbus_daemon.address, private_problems)
    assert not [p for p in problems if p.startswith(name)], f"dbus-fast changed: {problems}"


def test_every_problem_names_a_listed_private(dbus_daemon: DBusDaemon) -> None:
    async def run() -> list[str]:
        bus = MessageBus(bus_address=dbus_daemon.address)  # not connected: no writer
        return private_problems(bus)

    problems = asyncio.run(run())
    names = {p.name for p in DBUS_FAST_PRIVATES}
    assert problems and all(p.split(":")[0] in names for p in problems), problems


def test_a_bus_without_the_private_writer_is_refused_loudly(dbus_daemon: DBusDaemon) -> None:
    def without_writer(bus: MessageBus) -> str:
        writer = bus._writer
        del bus._writer
        try:
            with pytest.raises(DbusFastChanged) as refused:
                tolerate_full_socket(bus)
        finally:
            bus._writer = writer
        return str(refused.value)

    assert "MessageBus._writer" in _with_bus(dbus_daemon.address, without_writer)


def test_a_prepared_bus_still_talks(dbus_daemon: DBusDaemon) -> None:
    async def run() -> list[object]:
        async with _connected(dbus_daemon.address) as bus:
            tolerate_full_socket(bus)
            tolerate_full_socket(bus)  # twice is harmless
            reply = await bus.call(
                Message(
                    destination="org.freedesktop.DBus",
                    path="/org/freedesktop/DBus",
                    interface="org.freedesktop.DBus",
                    member="GetId",
                )
            )
            assert reply is not None and reply.message_type is MessageType.METHOD_RETURN
            assert outgoing_queue(bus).queued_bytes == 0
            return list(reply.body)

    (bus_id,) = asyncio.run(run())
    assert isinstance(bus_id, str) and bus_id


# -- the bound -----------------------------------------------------------------------


def _message(kind: MessageType, size: int) -> QueuedMessage:
    """A queued message as dbus-fast's writer holds it: the queue reads its type byte."""
    data = bytearray(size)
    data[0:2] = bytes([ord("l"), kind.value])
    return (data, None, None)


def _sizes(queue: OutgoingQueue) -> list[int]:
    return [len(message[0]) for message in queue]


def test_signals_past_the_bound_are_dropped_replies_never(
    caplog: pytest.LogCaptureFixture,
) -> None:
    queue = OutgoingQueue(collections.deque(), bound=1000)
    with caplog.at_level(logging.WARNING, logger="mux.system.dbus_adapter"):
        queue.append(_message(MessageType.SIGNAL, 600))
        queue.append(_message(MessageType.SIGNAL, 400))  # exactly at the bound: kept
        queue.append(_message(MessageType.SIGNAL, 10))  # past it: dropped
        queue.append(_message(MessageType.SIGNAL, 10))
        for kind in (MessageType.METHOD_RETURN, MessageType.ERROR, MessageType.METHOD_CALL):
            queue.append(_message(kind, 500))  # never dropped
    assert _sizes(queue) == [600, 400, 500, 500, 500]
    assert queue.queued_bytes == 2500
    assert queue.dropped == 2
    assert len([r for r in caplog.records if "dropped" in r.getMessage()]) == 1


def test_an_episode_ends_when_the_queue_has_drained(caplog: pytest.LogCaptureFixture) -> None:
    queue = OutgoingQueue(collections.deque(), bound=100)
    with caplog.at_level(logging.WARNING, logger="mux.system.dbus_adapter"):
        queue.append(_message(MessageType.SIGNAL, 100))
        queue.append(_message(MessageType.SIGNAL, 100))  # dropped: first episode
        queue.popleft()
        assert queue.queued_bytes == 0
        queue.append(_message(MessageType.SIGNAL, 500))  # an empty queue takes any one
        queue.append(_message(MessageType.SIGNAL, 1))  # dropped: second episode
    assert _sizes(queue) == [500]
    assert len([r for r in caplog.records if "dropped" in r.getMessage()]) == 2


def test_a_dropped_signal_is_reported_sent() -> None:
    async def run() -> bool:
        queue = OutgoingQueue(collections.deque(), bound=10)
        queue.append(_message(MessageType.SIGNAL, 10))
        sent: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        data, fds, _ = _message(MessageType.SIGNAL, 10)
        queue.append((data, fds, sent))
        return sent.done() and sent.result() is None

    assert asyncio.run(run())


def test_messages_queued_before_are_kept_and_counted() -> None:
    waiting = collections.deque([_message(MessageType.SIGNAL, 50) for _ in range(3)])
    queue = OutgoingQueue(waiting, bound=10)
    assert _sizes(queue) == [50, 50, 50]
    assert queue.queued_bytes == 150
