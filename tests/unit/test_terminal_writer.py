"""TerminalWriter on a real PTY: never waits for the terminal, keeps what it has not taken in
order, tells when it has taken everything, and ends quietly when the terminal goes."""

from __future__ import annotations

import asyncio
import os
import pty
import tty
from collections.abc import Iterator

import pytest

from mux.system.terminal_writer import TerminalWriter
from tests.loop_support import settled, until

MORE_THAN_A_PTY_TAKES = 1 << 20


@pytest.fixture
def terminal() -> Iterator[list[int]]:
    """[master, slave]; a test that closes one sets it to -1."""
    fds = list(pty.openpty())
    tty.setraw(fds[1])  # as a client attached leaves it: bytes pass unchanged
    for fd in fds:
        os.set_blocking(fd, False)
    yield fds
    for fd in fds:
        if fd >= 0:
            os.close(fd)


def read_all(master: int, size: int) -> bytes:
    got = bytearray()
    while len(got) < size:
        try:
            got += os.read(master, 65536)
        except BlockingIOError:
            break
    return bytes(got)


async def drain_into(master: int, got: bytearray, until: asyncio.Event) -> None:
    """Read the terminal as it becomes readable, until `until` is set."""
    loop = asyncio.get_running_loop()
    readable = asyncio.Event()
    loop.add_reader(master, readable.set)
    try:
        while not until.is_set():
            try:
                got += os.read(master, 65536)
            except BlockingIOError:
                readable.clear()
                waits = {asyncio.ensure_future(e.wait()) for e in (readable, until)}
                _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                for waiting in pending:
                    waiting.cancel()
    finally:
        loop.remove_reader(master)


def test_what_the_terminal_does_not_take_waits_in_order(terminal: list[int]) -> None:
    master, slave = terminal
    data = bytes(i % 251 for i in range(MORE_THAN_A_PTY_TAKES))

    async def scenario() -> bytes:
        writer = TerminalWriter(os.dup(slave), asyncio.get_running_loop())
        writer.write(data[:1000])
        writer.write(data[1000:])  # returns at once, the terminal full
        assert 0 < writer.backlog < len(data)
        drained = asyncio.Event()
        writer.when_drained(drained.set)
        got = bytearray()
        reader = asyncio.create_task(drain_into(master, got, drained))
        await asyncio.wait_for(drained.wait(), 10)
        await reader
        got += read_all(master, len(data) - len(got))
        assert writer.backlog == 0
        writer.close()
        return bytes(got)

    assert asyncio.run(scenario()) == data


def test_when_drained_is_called_at_once_when_nothing_waits(terminal: list[int]) -> None:
    master, slave = terminal

    async def scenario() -> list[str]:
        writer = TerminalWriter(os.dup(slave), asyncio.get_running_loop())
        writer.write(b"small")
        called: list[str] = []
        writer.when_drained(lambda: called.append("now"))
        writer.close()
        return called

    assert asyncio.run(scenario()) == ["now"]
    assert read_all(master, 5) == b"small"


def test_at_most_calls_back_once_even_if_the_terminal_never_reads(
    terminal: list[int],
) -> None:
    _, slave = terminal

    async def scenario() -> list[str]:
        writer = TerminalWriter(os.dup(slave), asyncio.get_running_loop())
        writer.write(b"x" * MORE_THAN_A_PTY_TAKES)
        called: list[str] = []
        writer.when_drained(lambda: called.append("given up"), at_most=0.05)
        await until(lambda: bool(called), "the bound to pass")
        await settled("a second call, if one were coming", within=1.0)
        assert writer.backlog > 0
        writer.close()
        return called

    assert asyncio.run(scenario()) == ["given up"]


def test_discard_forgets_the_backlog_and_the_callbacks(terminal: list[int]) -> None:
    _, slave = terminal

    async def scenario() -> list[str]:
        writer = TerminalWriter(os.dup(slave), asyncio.get_running_loop())
        writer.write(b"x" * MORE_THAN_A_PTY_TAKES)
        called: list[str] = []
        writer.when_drained(lambda: called.append("drained"))
        writer.discard()
        assert writer.backlog == 0
        writer.write(b"after")  # still open: written (or kept) as before
        assert writer.is_open
        writer.close()
        return called

    assert asyncio.run(scenario()) == []


def test_a_terminal_that_goes_away_ends_the_writer_quietly(terminal: list[int]) -> None:
    master, slave = terminal

    async def scenario() -> tuple[bool, int, list[str]]:
        writer = TerminalWriter(os.dup(slave), asyncio.get_running_loop())
        writer.write(b"x" * MORE_THAN_A_PTY_TAKES)
        called: list[str] = []
        writer.when_drained(lambda: called.append("drained"))
        os.close(master)  # the terminal emulator is gone: writes fail with EIO
        terminal[0] = -1
        await until(lambda: not writer.is_open, "the writer to end")
        writer.write(b"ignored")
        return writer.is_open, writer.backlog, called

    assert asyncio.run(scenario()) == (False, 0, [])
