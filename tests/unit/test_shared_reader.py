"""The shared reader on a real event loop and real sockets: a bounded number of ready
descriptors served a loop turn, each in turn, none after its removal, and the loop's
own readers where there is no epoll."""

import asyncio
import contextlib
import functools
import select
import socket
from collections.abc import Iterator

import pytest

from mux.system.shared_reader import SharedReader
from tests.loop_support import until


@pytest.fixture
def ready_sockets() -> Iterator[list[socket.socket]]:
    """Five sockets that stay readable: each has a byte waiting that nobody reads."""
    pairs = [socket.socketpair() for _ in range(5)]
    for _, b in pairs:
        b.send(b"x")
    yield [a for a, _ in pairs]
    for a, b in pairs:
        a.close()
        b.close()


def serve(sockets: list[socket.socket], batch: int, calls: int) -> list[int | str]:
    """What happened, in order, until `calls` callbacks ran: each callback's socket
    index, and "turn" at the start of every loop turn."""

    async def main() -> list[int | str]:
        loop = asyncio.get_running_loop()
        shared = SharedReader(loop, batch, turn_seconds=0.0)  # one batch a turn
        events: list[int | str] = []

        def turn() -> None:
            events.append("turn")
            loop.call_soon(turn)

        for index, sock in enumerate(sockets):
            shared.add_reader(sock.fileno(), functools.partial(events.append, index))
        loop.call_soon(turn)
        await until(lambda: sum(e != "turn" for e in events) >= calls, "callbacks")
        shared.close()
        return events

    return asyncio.run(main())


def test_a_turn_ends_after_a_batch_once_its_time_is_up(
    ready_sockets: list[socket.socket],
) -> None:
    events = serve(ready_sockets, batch=2, calls=20)
    runs: list[int] = []
    count = 0
    for event in events:
        if event == "turn":
            runs.append(count)
            count = 0
        else:
            count += 1
    assert max([*runs, count]) == 2


def test_every_ready_descriptor_is_served_before_any_is_served_again(
    ready_sockets: list[socket.socket],
) -> None:
    served = [e for e in serve(ready_sockets, batch=2, calls=15) if e != "turn"]
    for start in range(0, 15, 5):
        assert sorted(served[start : start + 5]) == [0, 1, 2, 3, 4], served


def test_a_descriptor_removed_by_an_earlier_callback_of_the_turn_is_not_called() -> None:
    a, b = socket.socketpair()
    c, d = socket.socketpair()
    with contextlib.ExitStack() as stack:
        for sock in (a, b, c, d):
            stack.enter_context(sock)
        b.send(b"x")
        d.send(b"x")

        async def main() -> list[str]:
            loop = asyncio.get_running_loop()
            shared = SharedReader(loop)
            calls: list[str] = []

            def first(name: str) -> None:
                calls.append(name)
                shared.remove_reader(a.fileno())
                shared.remove_reader(c.fileno())

            shared.add_reader(a.fileno(), lambda: first("a"))
            shared.add_reader(c.fileno(), lambda: first("c"))
            await until(lambda: calls, "a callback")
            for _ in range(5):
                await asyncio.sleep(0)
            assert shared.descriptors == 0
            shared.close()
            return calls

        assert len(asyncio.run(main())) == 1


def test_without_epoll_the_loop_reads_each_descriptor_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(select, "epoll")
    a, b = socket.socketpair()
    with a, b:
        b.send(b"x")

        async def main() -> None:
            loop = asyncio.get_running_loop()
            shared = SharedReader(loop)
            calls: list[int] = []
            shared.add_reader(a.fileno(), lambda: calls.append(1))
            await until(lambda: calls, "the loop's own reader")
            shared.remove_reader(a.fileno())
            assert not loop.remove_reader(a.fileno())  # (already gone)

        asyncio.run(main())


def test_a_failing_callback_is_reported_and_the_rest_of_its_turn_still_runs(
    ready_sockets: list[socket.socket],
) -> None:
    async def main() -> tuple[list[int], list[str]]:
        loop = asyncio.get_running_loop()
        reported: list[str] = []
        loop.set_exception_handler(lambda _loop, context: reported.append(context["message"]))
        shared = SharedReader(loop, batch=5, turn_seconds=0.0)
        served: list[int] = []

        def fail() -> None:
            raise RuntimeError("boom")

        shared.add_reader(ready_sockets[0].fileno(), fail)
        for index, sock in enumerate(ready_sockets[1:], 1):
            shared.add_reader(sock.fileno(), functools.partial(served.append, index))
        await until(lambda: reported and len(served) >= 4, "a turn with a failure in it")
        shared.close()
        return served, reported

    served, reported = asyncio.run(main())
    assert sorted(served[:4]) == [1, 2, 3, 4]
    assert reported[0] == f"reading descriptor {ready_sockets[0].fileno()} failed"
