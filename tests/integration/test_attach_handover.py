"""A client's terminal handed over in HELLO (docs/attach-protocol.md#the-terminal-handed-over):
muxd writes the repaint and the output to the terminal itself, the connection carries the
conversation, the last output reaches the terminal before EXITED, nothing of muxd's stays on
the terminal after the attach, and anything that is not a terminal is relayed as before."""

from __future__ import annotations

import contextlib
import errno
import os
import pty
import select
import time
from collections.abc import Callable, Iterator

import pytest

from mux.protocol import attach as proto
from tests.attach_client import ProtocolClient
from tests.harness import DEFAULT_TIMEOUT, Service, assert_answers


class Terminal:
    """A PTY of the test's own: the slave is what a client offers, the master is read
    as its terminal emulator would."""

    def __init__(self) -> None:
        self.master, self.slave = pty.openpty()
        os.set_blocking(self.master, False)
        self.shown = bytearray()

    def read(self, timeout: float) -> bool:
        """What arrives within `timeout`; False once no one holds the slave open."""
        if not select.select([self.master], [], [], timeout)[0]:
            return True
        try:
            data = os.read(self.master, 65536)
        except BlockingIOError:
            return True
        except OSError as e:
            assert e.errno == errno.EIO
            return False
        self.shown += data
        return True

    def wait_shown(self, needle: bytes, timeout: float = DEFAULT_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.shown:
            assert time.monotonic() < deadline, f"{needle!r} not shown; got {bytes(self.shown)!r}"
            self.read(0.1)

    def read_slowly_until(
        self, client: ProtocolClient, condition: Callable[[], bool], what: str
    ) -> None:
        """Read the terminal 10 ms at a time, as it would while busy, and the connection
        meanwhile, until `condition`."""
        deadline = time.monotonic() + DEFAULT_TIMEOUT
        while not condition():
            assert time.monotonic() < deadline, f"{what}; got {client.kinds()}"
            self.read(0.01)
            client.receive(0.01)

    def drain(self) -> None:
        """Everything the terminal holds now."""
        while select.select([self.master], [], [], 0)[0] and self.read(0):
            pass

    def close(self) -> None:
        for fd in (self.master, self.slave):
            if fd >= 0:
                os.close(fd)


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    term = Terminal()
    yield term
    term.close()


def hand_over(service: Service, pane: int, fd: int) -> tuple[ProtocolClient, proto.Welcome]:
    client = ProtocolClient.connect(service.runtime / "mux.sock")
    client.send(proto.Hello(terminal_fd=fd), proto.Attach(pane))
    welcome = client.wait_for(proto.Welcome)
    client.wait_for(proto.Attached)
    return client, welcome


def test_muxd_writes_the_repaint_and_the_output_to_the_terminal(
    service: Service, terminal: Terminal
) -> None:
    pane = service.spawn(["sh", "-c", "echo before; read x; echo got-$x; exec cat"])
    service.wait_screen(pane, "before")
    client, welcome = hand_over(service, pane, terminal.slave)
    assert welcome.terminal is True
    terminal.wait_shown(b"before")  # the repaint
    client.send(proto.Input(b"keys\r"))
    terminal.wait_shown(b"got-keys")
    client.receive(0.3)
    assert not [f for f in client.frames if isinstance(f, proto.Output | proto.Repaint)]
    client.close()


def test_the_last_output_is_on_the_terminal_before_exited(
    service: Service, terminal: Terminal
) -> None:
    # 200 KB after the key: more than the terminal takes at once, so muxd holds a backlog.
    script = "read x; head -c 200000 /dev/zero | tr '\\0' 'x'; echo; echo the-end; exit 3"
    pane = service.spawn(["sh", "-c", script])
    client, _ = hand_over(service, pane, terminal.slave)
    client.send(proto.Input(b"go\r"))
    terminal.read_slowly_until(
        client, lambda: any(isinstance(f, proto.Exited) for f in client.frames), "no EXITED"
    )
    exited = next(f for f in client.frames if isinstance(f, proto.Exited))
    assert exited.status == 3
    terminal.drain()  # what the terminal holds when the client reads EXITED
    assert b"the-end" in terminal.shown
    client.wait_closed()


def test_after_a_detach_muxd_holds_the_terminal_no_more(
    service: Service, terminal: Terminal
) -> None:
    pane = service.spawn(["sh", "-c", "echo ready; exec cat"])
    client, _ = hand_over(service, pane, terminal.slave)
    terminal.wait_shown(b"ready")
    client.send(proto.Detach())
    client.wait_for(proto.Detached)
    client.wait_closed()
    os.close(terminal.slave)
    terminal.slave = -1
    # The master reads EIO only once every holder of the slave has closed it.
    deadline = time.monotonic() + DEFAULT_TIMEOUT
    while terminal.read(0.1):
        assert time.monotonic() < deadline, "muxd still holds the terminal after the detach"


def test_a_terminal_that_takes_nothing_never_blocks_muxd(
    service: Service, terminal: Terminal
) -> None:
    pane = service.spawn(
        ["sh", "-c", "read x; yes flood | head -c 5000000; echo; echo done; exec cat"]
    )
    client, _ = hand_over(service, pane, terminal.slave)
    client.send(proto.Input(b"go\r"))
    service.wait_screen(pane, "done")  # the pane was read to the end: muxd did not wait
    assert_answers(service)
    # Once the terminal reads again it is shown the screen as it is now.
    terminal.wait_shown(b"done")
    client.close()


@pytest.mark.parametrize("offered", ["a pipe", "no such descriptor"])
def test_anything_but_a_terminal_is_relayed_in_frames(service: Service, offered: str) -> None:
    read_end, write_end = os.pipe()
    try:
        fd = write_end if offered == "a pipe" else 987
        pane = service.spawn(["sh", "-c", "echo relayed; exec cat"])
        service.wait_screen(pane, "relayed")
        client, welcome = hand_over(service, pane, fd)
        assert welcome.terminal is False
        client.wait_until(lambda: "relayed" in client.output_text(), "the repaint in a frame")
        client.close()
        assert "its output is relayed" in service.log()
    finally:
        os.close(read_end)
        os.close(write_end)


def test_frames_while_exited_waits_for_the_terminal_change_nothing(
    service: Service, terminal: Terminal
) -> None:
    # The terminal reads nothing until the pane has exited: EXITED waits for it (at most
    # a second); what the client says meanwhile is not acted on, and EXITED still comes.
    script = "read x; head -c 300000 /dev/zero | tr '\\0' 'y'; exit 4"
    pane = service.spawn(["sh", "-c", script])
    client, _ = hand_over(service, pane, terminal.slave)
    client.send(proto.Input(b"go\r"))
    service.wait_exited(pane)
    other = service.spawn(["sh", "-c", "exec cat"])
    # (On a loaded machine the second may pass first: EXITED came, nothing was acted on.)
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        client.send(proto.Input(b"late keys"), proto.Resize(10, 20), proto.Attach(other))
    terminal.read_slowly_until(client, lambda: client.closed, "the connection did not end")
    assert [f.status for f in client.frames if isinstance(f, proto.Exited)] == [4]
    assert not any(isinstance(f, proto.Attached) and f.pane == other for f in client.frames)
    assert_answers(service)
