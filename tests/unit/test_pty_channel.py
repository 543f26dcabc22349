"""A pane's terminal channel on real PTYs (os.openpty) and a real event loop: batched
reads, the end of the terminal, input backpressure (accepted whole or refused whole),
the hang-up, and input lost to a failing write."""

import asyncio
import contextlib
import fcntl
import logging
import os
import shutil
import socket
import struct
import termios
import tty
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import pytest

from mux.panes.process import start_on_pty
from mux.panes.pty_channel import PtyChannel
from mux.protocol.errors import InvalidArgument, PreconditionFailed, Unavailable
from mux.system.shared_reader import SharedReader
from tests.loop_support import until


def run(test: Callable[[asyncio.AbstractEventLoop], Coroutine[Any, Any, None]]) -> None:
    async def main() -> None:
        await test(asyncio.get_running_loop())

    asyncio.run(main())


def readable_bytes(fd: int) -> int:
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


@pytest.fixture
def pty() -> Iterator[tuple[int, int]]:
    """(master, slave): the master non-blocking like a pane's, the slave raw (no echo, no
    line editing), so that what one side writes the other reads unchanged."""
    master, slave = os.openpty()
    os.set_blocking(master, False)
    tty.setraw(slave)
    yield master, slave
    for fd in (master, slave):
        with contextlib.suppress(OSError):  # the channel closed its master
            os.close(fd)


def test_output_waiting_in_the_terminal_is_delivered_in_one_batch(pty: tuple[int, int]) -> None:
    master, slave = pty

    async def test(loop: asyncio.AbstractEventLoop) -> None:
        for chunk in (b"a" * 1000, b"b" * 1000, b"c" * 1000):
            os.write(slave, chunk)
        # (the kernel moves it to the master's side)
        await until(lambda: readable_bytes(master) >= 3000, "the output at the master")
        deliveries: list[bytes] = []
        channel = PtyChannel(master, loop, pane_id=1, max_input_backlog=4096)
        channel.start(deliveries.append)
        await until(lambda: deliveries, "a delivery")
        assert deliveries == [b"a" * 1000 + b"b" * 1000 + b"c" * 1000]
        assert channel.bytes_read == 3000
        channel.close()

    run(test)


def test_nothing_is_read_before_start(pty: tuple[int, int]) -> None:
    master, slave = pty

    async def test(loop: asyncio.AbstractEventLoop) -> None:
        channel = PtyChannel(master, loop, pane_id=1, max_input_backlog=4096)
        os.write(slave, b"early")
        await until(lambda: readable_bytes(master) >= 5, "the output at the master")
        assert channel.bytes_read == 0  # the loop ran, and no reader was there
        deliveries: list[bytes] = []
        channel.start(deliveries.append)
        await until(lambda: deliveries, "a delivery")
        assert deliveries == [b"early"]
        channel.close()

    run(test)


def test_output_is_read_in_turn_or_promptly_and_nothing_is_lost_in_the_switch(
    pty: tuple[int, int],
) -> None:
    master, slave = pty

    async def test(loop: asyncio.AbstractEventLoop) -> None:
        shared = SharedReader(loop)
        deliveries: list[bytes] = []
        channel = PtyChannel(master, loop, pane_id=1, max_input_backlog=4096, shared_reader=shared)
        channel.start(deliveries.append)
        assert shared.descriptors == 1  # read in turn with other panes
        os.write(slave, b"in turn;")
        await until(lambda: b"".join(deliveries) == b"in turn;", "output read in turn")
        channel.read_promptly(True)  # someone watches it live: a reader of its own
        assert shared.descriptors == 0
        os.write(slave, b"promptly;")
        await until(lambda: b"".join(deliveries).endswith(b"promptly;"), "prompt output")
        channel.read_promptly(False)
        os.write(slave, b"again")
        await until(lambda: b"".join(deliveries) == b"in turn;promptly;again", "output")
        channel.close()
        assert shared.descriptors == 0  # not left in the epoll set once closed
        assert not loop.remove_reader(master)
        shared.close()

    run(test)


def test_the_terminal_closes_when_the_last_slave_holder_closes_it(
    pty: tuple[int, int], caplog: pytest.LogCaptureFixture
) -> None:
    master, slave = pty

    async def test(loop: asyncio.AbstractEventLoop) -> None:
        deliveries: list[bytes] = []
        channel = PtyChannel(master, loop, pane_id=1, max_input_backlog=4096)
        channel.start(deliveries.append)
        os.write(slave, b"last words")
        os.close(slave)
        await until(lambda: not channel.is_open, "the terminal to close")
        assert b"".join(deliveries) == b"last words"  # read before the EIO
        assert channel.fd is None
        with pytest.raises(PreconditionFailed, match="no longer has a terminal"):
            channel.send(b"x")

    with caplog.at_level(logging.WARNING):
        run(test)
    assert not caplog.records  # EIO is how a terminal ends, not a failure


def test_input_beyond_the_backlog_limit_is_refused_whole_and_the_rest_arrives_in_order(
    pty: tuple[int, int],
) -> None:
    master, slave = pty
    limit = 256 * 1024  # more than the terminal's own input queue holds

    async def test(loop: asyncio.AbstractEventLoop) -> None:
        channel = PtyChannel(master, loop, pane_id=4, max_input_backlog=limit)
        channel.start(lambda data: None)
        with pytest.raises(InvalidArgument, match="send it in parts"):
            channel.send(b"x" * (limit + 1))
        assert channel.input_backlog_bytes == 0
        channel.send(b"a" * limit)  # the program reads nothing yet
        waiting = channel.input_backlog_bytes
        assert 0 < waiting < limit
        with pytest.raises(Unavailable, match="not reading its input fast enough"):
            channel.send(b"b" * (limit - waiting + 1))
        assert channel.input_backlog_bytes == waiting  # not a byte of it was taken
        channel.send(b"c" * (limit - waiting))  # exactly what still fits
        assert channel.input_backlog_bytes == limit
        drained: list[bool] = []
        channel.when_input_drained(lambda: drained.append(True))
        assert not drained

        received = bytearray()
        expected = limit + (limit - waiting)
        os.set_blocking(slave, False)

        def read_slave() -> bool:
            with contextlib.suppress(BlockingIOError):
                received.extend(os.read(slave, 65536))
            return len(received) >= expected

        await until(read_slave, "the program to read all accepted input")
        assert bytes(received) == b"a" * limit + b"c" * (limit - waiting)
        await until(lambda: drained, "the drained callback")
        assert channel.input_backlog_bytes == 0
        channel.close()

    run(test)


def test_input_lost_to_a_failing_write_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A PTY master practically never fails a write (with the slave closed, it takes
    the bytes); a socket whose peer is gone does (EPIPE), and the channel's input
    path does not care which kind of fd it writes."""
    ours, program = socket.socketpair()
    fd = ours.detach()
    os.set_blocking(fd, False)
    limit = 4 << 20

    async def test(loop: asyncio.AbstractEventLoop) -> None:
        channel = PtyChannel(fd, loop, pane_id=9, max_input_backlog=limit)
        channel.send(b"k" * (2 << 20))  # more than the socket buffers: a backlog
        waiting = channel.input_backlog_bytes
        assert waiting > 0
        drained: list[bool] = []
        channel.when_input_drained(lambda: drained.append(True))
        program.close()  # the reader is gone: the next write fails
        await until(lambda: drained, "the backlog to be given up")
        assert channel.input_backlog_bytes == 0
        lost = [r for r in caplog.records if "input were lost" in r.getMessage()]
        assert len(lost) == 1
        message = lost[0].getMessage()
        assert "pane 9" in message
        assert f"{waiting} bytes" in message
        assert os.strerror(32) in message  # EPIPE's strerror
        channel.close()

    with caplog.at_level(logging.WARNING):
        run(test)


def test_hang_up_ends_a_program_that_does_not_ignore_it() -> None:
    started = start_on_pty(
        shutil.which("sleep") or "/bin/sleep",
        ["sleep", "60"],
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
        rows=24,
        cols=80,
    )
    pid = started.process.pid

    async def test(loop: asyncio.AbstractEventLoop) -> None:
        channel = PtyChannel(started.master_fd, loop, pane_id=2, max_input_backlog=4096)
        channel.start(lambda data: None)
        await until(lambda: channel.foreground_group() == pid, "sleep in the foreground")
        channel.hang_up(pid)
        assert not channel.is_open
        statuses: list[int] = []

        def reaped() -> bool:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                statuses.append(os.waitstatus_to_exitcode(status))
            return bool(statuses)

        await until(reaped, "sleep to end")
        assert statuses == [-1]  # SIGHUP

    run(test)


def test_window_size_reaches_the_terminal(pty: tuple[int, int]) -> None:
    master, slave = pty

    async def test(loop: asyncio.AbstractEventLoop) -> None:
        channel = PtyChannel(master, loop, pane_id=3, max_input_backlog=4096)
        channel.set_window_size(33, 101)
        rows, cols = struct.unpack("HHHH", fcntl.ioctl(slave, termios.TIOCGWINSZ, bytes(8)))[:2]
        assert (rows, cols) == (33, 101)
        channel.close()

    run(test)
