"""muxctl.rawterm.held_raw on a real PTY: between two parts of an attach the terminal
stays raw, so what is typed there waits as typed, and the settings come back after."""

import os
import termios
from collections.abc import Iterator

import pytest

from muxctl.rawterm import RawTerminal, held_raw


@pytest.fixture
def terminal() -> Iterator[tuple[int, int]]:
    master, slave = os.openpty()
    yield master, slave
    os.close(master)
    os.close(slave)


def _lflag(fd: int) -> int:
    return int(termios.tcgetattr(fd)[3])


def test_keys_typed_between_two_parts_wait_as_typed(terminal: tuple[int, int]) -> None:
    master, slave = terminal
    before = termios.tcgetattr(slave)
    assert _lflag(slave) & termios.ICANON
    with held_raw(slave):
        with RawTerminal(slave, slave):  # (a part: raw again, non-blocking, given back)
            pass
        assert not _lflag(slave) & (termios.ICANON | termios.ECHO | termios.ISIG)
        # Ctrl-C and Enter typed now: bytes for the next part, not a signal, not echoed.
        os.write(master, b"\x03ls\r")
        assert os.read(slave, 16) == b"\x03ls\r"
    assert termios.tcgetattr(slave) == before


def test_anything_but_a_terminal_is_left_as_it_is() -> None:
    read_end, write_end = os.pipe()
    try:
        with held_raw(read_end):
            os.write(write_end, b"x")
        assert os.read(read_end, 1) == b"x"
    finally:
        os.close(read_end)
        os.close(write_end)
