"""The attach hub without muxd: stand-in panes, real socket pairs for the sessions.

A stand-in pane has what the hub and its sessions use of a pane (its output
sinks, repaint, input, size, exit) and no process or terminal; the directory
stands in for the pane table. Everything else is real: each session is an
asyncio protocol on one end of a socket pair, and the test reads the other
end as a client would (docs/attach-protocol.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar

import pytest

from mux.attach import pacing
from mux.attach.hub import AttachHubOf
from mux.protocol import attach as proto
from mux.protocol.errors import NoSuchPane
from tests.loop_support import until

F = TypeVar("F", bound=proto.Frame)
TIMEOUT = 10.0


class StandInPane:
    """A pane as the hub sees it: output to its sinks, a screen to repaint, input kept."""

    def __init__(self, directory: StandInDirectory, pane_id: int, pid: int | None = None) -> None:
        self.id = pane_id
        self.pid = pid if pid is not None else 1_000_000 + pane_id  # no process's session
        self.rows, self.cols = 24, 80
        self.is_running = True
        self.exit_status = 0
        self.input_backlog_bytes = 0
        self.pastes_bracketed = False
        self.screen = f"the screen of pane {pane_id}"
        self.typed = bytearray()
        self.sinks: list[Callable[[bytes], None]] = []
        self._directory = directory

    @property
    def is_live(self) -> bool:
        return self.is_running

    def add_output_sink(self, sink: Callable[[bytes], None], watching: bool = False) -> None:
        self.sinks.append(sink)

    def remove_output_sink(self, sink: Callable[[bytes], None]) -> None:
        self.sinks.remove(sink)

    def print(self, data: bytes) -> None:
        for sink in list(self.sinks):
            sink(data)

    def repaint(self) -> bytes:
        return b"\x1b[H\x1b[2J" + self.screen.encode()

    def cursor_state(self) -> bytes:
        return b"\x1b[1;1H"

    def send_input(self, data: bytes) -> None:
        self.typed += data

    def when_input_drained(self, callback: Callable[[], None]) -> None:
        callback()

    def resize(self, rows: int, cols: int) -> None:
        self.rows, self.cols = rows, cols
        self._directory.changed(self, ("Rows", "Cols"))

    def exit(self, status: int) -> None:
        self.is_running = False
        self.exit_status = status
        self._directory.exited(self)


class UnsubscribingFails(StandInPane):
    """A pane whose sink cannot be removed: ending its client raises."""

    def remove_output_sink(self, sink: Callable[[bytes], None]) -> None:
        raise RuntimeError("the stand-in's sink list is broken")


class StandInDirectory:
    """The pane table as the hub sees it."""

    def __init__(self) -> None:
        self.panes: dict[int, StandInPane] = {}
        self.observers: list[Any] = []
        self.uses: list[tuple[int, str | None]] = []  # the spawn ledger's marks
        self._use_count = 0
        self.use_order: dict[int, int] = {}

    def add(self, pane_id: int, pid: int | None = None, kind: type = StandInPane) -> StandInPane:
        pane: StandInPane = kind(self, pane_id, pid)
        self.panes[pane_id] = pane
        for observer in self.observers:
            observer.pane_added(pane)
        return pane

    def remove(self, pane: StandInPane) -> None:
        del self.panes[pane.id]
        for observer in self.observers:
            observer.pane_removed(pane)

    def changed(self, pane: StandInPane, properties: Sequence[str]) -> None:
        for observer in self.observers:
            observer.pane_changed(pane, properties)

    def exited(self, pane: StandInPane) -> None:
        for observer in self.observers:
            observer.pane_exited(pane)

    def add_observer(self, observer: Any) -> None:
        self.observers.append(observer)

    def __iter__(self) -> Iterator[StandInPane]:
        return iter(list(self.panes.values()))

    def get(self, pane_id: int) -> StandInPane:
        pane = self.panes.get(pane_id)
        if pane is None:
            raise NoSuchPane(pane_id)
        return pane

    def most_recently_used(self, excluding: StandInPane | None = None) -> StandInPane:
        running = [p for p in self.panes.values() if p.is_running and p is not excluding]
        if not running:
            raise NoSuchPane(0, "there is no running pane")
        return max(running, key=lambda p: (self.use_order.get(p.id, 0), p.id))

    def mark_used(self, pane: StandInPane) -> None:
        self._use_count += 1
        self.use_order[pane.id] = self._use_count

    def mark_use(self, pane: StandInPane, user: str | None) -> None:
        self.uses.append((pane.id, user))


class Client:
    """The client's end of a session's socket pair, read as muxctl would."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self.sock = sock
        self.decoder = proto.FrameDecoder()
        self.frames: list[proto.Frame] = []
        self.closed = False

    async def send(self, *frames: proto.Frame) -> None:
        loop = asyncio.get_running_loop()
        await loop.sock_sendall(self.sock, b"".join(proto.encode(f) for f in frames))

    async def read(self, size: int = 1 << 20) -> None:
        """One chunk of what the service sent (EOF sets `closed`)."""
        data = await asyncio.get_running_loop().sock_recv(self.sock, size)
        if not data:
            self.closed = True
        self.decoder.receive_data(data)
        while (frame := self.decoder.next_frame()) is not None:
            self.frames.append(frame)

    async def until(
        self, condition: Callable[[], bool], what: str, timeout: float = TIMEOUT
    ) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.closed:
                raise AssertionError(f"closed before {what}; got {self.kinds()}")
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what}; got {self.kinds()}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.read(), left)

    async def wait_for(self, kind: type[F], count: int = 1) -> F:
        await self.until(lambda: len(self.of(kind)) >= count, f"{count} {kind.__name__}")
        return self.of(kind)[count - 1]

    async def wait_closed(self) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not self.closed:
            left = deadline - time.monotonic()
            assert left > 0, f"not closed; got {self.kinds()}"
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.read(), left)

    def of(self, kind: type[F]) -> list[F]:
        return [f for f in self.frames if isinstance(f, kind)]

    def kinds(self) -> list[str]:
        return [f.kind.name for f in self.frames]

    def output(self) -> bytes:
        return b"".join(f.data for f in self.of(proto.Output))


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 60))


Hub = AttachHubOf[StandInPane]


def make_hub(buffer_bytes: int = 1 << 20) -> tuple[Hub, StandInDirectory]:
    directory = StandInDirectory()
    return Hub(directory, asyncio.get_running_loop(), buffer_bytes), directory


def open_attached(hub: Hub, pane_id: int, user: str | None = None) -> Client:
    return Client(hub.open_attached(pane_id, user=user))


def connect(hub: Hub, peer_pid: int | None = None) -> Client:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.setblocking(False)
    hub.accept(ours, peer_pid)
    return Client(theirs)


# -- several clients of one pane --------------------------------------------------


def test_several_clients_of_one_pane_share_its_output_and_its_keyboard() -> None:
    async def test() -> None:
        hub, directory = make_hub()
        pane = directory.add(1)
        first, second = open_attached(hub, 1, user=":1.7"), open_attached(hub, 1)
        for client in (first, second):
            assert await client.wait_for(proto.Attached) == proto.Attached(1, 24, 80)
            assert (await client.wait_for(proto.Repaint)).data == pane.repaint()
        assert hub.clients_of(pane) == 2
        assert (1, ":1.7") in directory.uses  # marked for the spawn ledger
        pane.print(b"one ")
        pane.print(b"two")
        for client in (first, second):
            await client.until(lambda c=client: c.output() == b"one two", "the output")
        await first.send(proto.Input(b"from first "))
        await second.send(proto.Input(b"from second"))
        await until(lambda: bytes(pane.typed) == b"from first from second", "both inputs")
        await first.send(proto.Detach())
        await first.wait_for(proto.Detached)
        await first.wait_closed()
        await until(lambda: hub.clients_of(pane) == 1, "one client left")
        pane.print(b" three")
        await second.until(lambda: second.output().endswith(b" three"), "the output after")
        assert len(hub) == 1

    run(test)


def test_a_resize_repaints_every_client_of_the_pane_only() -> None:
    async def test() -> None:
        hub, directory = make_hub()
        resized, other = directory.add(1), directory.add(2)
        clients = [open_attached(hub, 1), open_attached(hub, 1)]
        bystander = open_attached(hub, 2)
        for client in [*clients, bystander]:
            await client.wait_for(proto.Repaint)
        await clients[0].send(proto.Resize(30, 100))
        for client in clients:
            await client.wait_for(proto.Repaint, count=2)
        assert (resized.rows, resized.cols) == (30, 100)
        other.print(b"still one repaint")
        await bystander.until(lambda: bystander.output() == b"still one repaint", "output")
        assert len(bystander.of(proto.Repaint)) == 1

    run(test)


def test_hello_then_attach_zero_skips_the_pane_the_client_runs_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A fixed session id: the runner's own may be 0 (a container's init session),
    # which the hub rightly never takes for a pane's.
    monkeypatch.setattr(os, "getsid", lambda pid: 4242)

    async def test() -> None:
        hub, directory = make_hub()
        directory.add(1)
        own = directory.add(2, pid=4242)  # this process runs "inside" pane 2
        directory.mark_used(own)
        client = connect(hub, peer_pid=os.getpid())
        await client.send(proto.Hello(), proto.Attach(2))
        await client.wait_for(proto.Welcome)
        refusal = await client.wait_for(proto.Error)
        assert refusal.code == "PreconditionFailed"
        await client.send(proto.Attach(0))
        assert (await client.wait_for(proto.Attached)).pane == 1
        assert hub.clients_of(own) == 0

    run(test)


def test_a_client_in_session_zero_attaches_a_pane_with_no_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a container, processes in init's session have session id 0; a held pane's
    pid is 0 too. That is no reason to call the pane the client's own (CI saw this)."""
    monkeypatch.setattr(os, "getsid", lambda pid: 0)

    async def test() -> None:
        hub, directory = make_hub()
        directory.add(1, pid=0)
        client = connect(hub, peer_pid=os.getpid())
        await client.send(proto.Hello(), proto.Attach(1))
        assert (await client.wait_for(proto.Attached)).pane == 1
        assert not client.of(proto.Error)

    run(test)


# -- the end of sessions -----------------------------------------------------------


def test_exit_close_and_is_open() -> None:
    async def test() -> None:
        hub, directory = make_hub()
        exiting, closed = directory.add(1), directory.add(2)
        watcher, victim = open_attached(hub, 1), open_attached(hub, 2)
        await watcher.wait_for(proto.Repaint)
        await victim.wait_for(proto.Repaint)
        exiting.print(b"last words")
        exiting.exit(5)
        assert (await watcher.wait_for(proto.Exited)).status == 5
        assert watcher.output() == b"last words"  # before EXITED
        await watcher.wait_closed()
        assert hub.is_open(closed)
        directory.remove(closed)
        assert not hub.is_open(closed)
        assert await victim.wait_for(proto.Error) == proto.Error("PaneClosed", "pane 2 was closed")
        await victim.wait_closed()
        await until(lambda: len(hub) == 0, "every session forgotten")
        assert hub.clients_of(exiting) == hub.clients_of(closed) == 0
        # OpenAttach on a pane closed before the session was connected.
        late = directory.add(3)
        racing = open_attached(hub, 3)
        directory.remove(late)
        assert await racing.wait_for(proto.Error) == proto.Error("PaneClosed", "pane 3 was closed")
        await racing.wait_closed()

    run(test)


def test_close_all_tells_every_client_and_wait_all_closed_returns_once_they_are() -> None:
    async def test() -> None:
        hub, directory = make_hub()
        directory.add(1)
        attached = [open_attached(hub, 1), open_attached(hub, 1)]
        greeted_only = connect(hub, peer_pid=None)
        await greeted_only.send(proto.Hello())
        await greeted_only.wait_for(proto.Welcome)
        for client in attached:
            await client.wait_for(proto.Repaint)
        hub.close_all("ServiceStopping", "mux is stopping")
        started = time.monotonic()
        await hub.wait_all_closed(TIMEOUT)
        assert time.monotonic() - started < TIMEOUT / 2
        assert len(hub) == 0
        for client in [*attached, greeted_only]:
            assert await client.wait_for(proto.Error) == proto.Error(
                "ServiceStopping", "mux is stopping"
            )
            await client.wait_closed()

    run(test)


def test_a_client_that_cannot_be_ended_is_logged_and_the_others_still_are(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def test() -> None:
        hub, directory = make_hub()
        directory.add(1, kind=UnsubscribingFails)
        directory.add(2)
        broken, healthy = open_attached(hub, 1), open_attached(hub, 2)
        await broken.wait_for(proto.Repaint)
        await healthy.wait_for(proto.Repaint)
        with caplog.at_level(logging.INFO, logger="mux.attach"):
            hub.close_all("ServiceUpgrading", "mux is being upgraded in place")
        failures = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(failures) == 1, caplog.text
        assert "ServiceUpgrading" in failures[0].getMessage()
        assert failures[0].exc_info is not None
        assert "the stand-in's sink list is broken" in caplog.text
        await healthy.wait_for(proto.Error)
        await healthy.wait_closed()
        await broken.wait_closed()  # ended all the same
        await hub.wait_all_closed(TIMEOUT)
        assert len(hub) == 0

    run(test)


# -- a client that falls behind ----------------------------------------------------


def test_a_lagging_client_skips_output_then_gets_one_fresh_repaint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # (the look a frame after the repaint, at once: the pane printed nothing meanwhile)
    monkeypatch.setattr(pacing, "FRAME_SECONDS", 0.0)
    buffer_bytes = 64 * 1024
    chunk = b"x" * 65536

    async def test() -> None:
        hub, directory = make_hub(buffer_bytes)
        pane = directory.add(1)
        stalled, reader = open_attached(hub, 1), open_attached(hub, 1)
        stalled.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        for client in (stalled, reader):
            await client.wait_for(proto.Repaint)
        printed = 0
        # The pane prints far more than the kernel and the bounded buffer hold.
        for _ in range(64):
            pane.print(chunk)
            printed += len(chunk)
            await reader.until(
                lambda n=printed: len(reader.output()) == n,  # type: ignore[misc]
                "the reader's copy",
            )
        pane.screen = "the screen after the flood"
        # Nothing more is printed: the stalled client reads what was queued, then
        # is resynchronised with one repaint of the screen as it is now.
        await stalled.wait_for(proto.Repaint, count=2)
        assert stalled.of(proto.Repaint)[1].data == pane.repaint()
        skipped = printed - len(stalled.output())
        assert skipped > printed // 2, "the stalled client was sent most of the flood"
        assert len(stalled.output()) < 4 * 1024 * 1024  # bounded, whatever the flood
        assert len(reader.of(proto.Repaint)) == 1  # the reader never fell behind
        # After the repaint, the live stream again.
        pane.print(b"live again")
        await stalled.until(lambda: stalled.output().endswith(b"live again"), "live output")
        assert len(stalled.of(proto.Repaint)) == 2

    run(test)


def test_a_client_behind_a_flood_is_shown_the_latest_screen_until_the_flood_ends() -> None:
    """While the pane keeps printing more than the client reads, the client gets
    repaints a frame apart instead of the output, and the program is never held back;
    once the pane prints little, the live stream again."""

    async def test() -> None:
        hub, directory = make_hub(64 * 1024)
        pane = directory.add(1)
        stalled = open_attached(hub, 1)
        stalled.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        await stalled.wait_for(proto.Repaint)
        flooding = True
        behind = asyncio.Event()  # the client has not read far more than it was sent

        async def flood() -> None:
            frame = 0
            while flooding:
                frame += 1
                pane.screen = f"frame {frame}"
                pane.print(b"y" * 65536)  # (never waits: the pane is not held back)
                if frame == 40:
                    behind.set()
                await asyncio.sleep(0.005)  # (a program's pace, not a wait for anything)

        flooder = asyncio.create_task(flood())
        try:
            await behind.wait()  # (the client reads only in `until`)
            await stalled.wait_for(proto.Repaint, count=4)
            during = len(stalled.output())
            await stalled.wait_for(proto.Repaint, count=6)
            assert len(stalled.output()) == during, "output was relayed during the flood"
        finally:
            flooding = False
            await flooder
        await stalled.until(
            lambda: stalled.of(proto.Repaint)[-1].data == pane.repaint(), "the last screen"
        )
        # What is printed within a frame of the flood is shown by one more repaint; what
        # follows it, live.
        repaints = len(stalled.of(proto.Repaint))
        pane.print(b"quiet now")
        await stalled.until(
            lambda: (
                stalled.output().endswith(b"quiet now") or len(stalled.of(proto.Repaint)) > repaints
            ),
            "the quiet output or its repaint",
        )
        pane.print(b"live again")
        await stalled.until(lambda: stalled.output().endswith(b"live again"), "live output")

    run(test)


def test_a_client_with_a_status_line_gets_a_pane_a_row_shorter_and_its_line_drawn() -> None:
    """HELLO `status`: the pane takes the terminal less its last row; the line's text
    (STATUS) is drawn there, escaped, after the repaint and when it changes; ListClients
    lists the whole terminal."""

    async def test() -> None:
        hub, directory = make_hub()
        pane = directory.add(1)
        client = connect(hub, peer_pid=os.getpid())
        await client.send(
            proto.Hello(status=True), proto.Resize(10, 40), proto.Status(b"first"), proto.Attach(1)
        )
        assert (await client.wait_for(proto.Welcome)).status
        await client.wait_for(proto.Repaint)
        assert (pane.rows, pane.cols) == (9, 40)
        assert [c.size for c in hub.clients(pane)] == [(10, 40)]

        def shown() -> bytes:  # (the first drawing comes with the repaint)
            return b"".join(
                f.data for f in client.frames if isinstance(f, proto.Repaint | proto.Output)
            )

        await client.until(lambda: b"first" in shown(), "the line drawn")
        assert b"\x1b[10;1H" in shown()  # on the terminal's last row
        await client.send(proto.Status(b"second \x1b[2J"))
        await client.until(lambda: b"second \\x1b[2J" in shown(), "the new text")
        pane.print(b"\x1b[r\x1b[99;1Hbottom")  # kept off the last row
        await client.until(lambda: b"bottom" in shown(), "the output")
        assert b"\x1b[1;9r\x1b[9;1Hbottom" in client.output()

    run(test)


# -- an OpenAttach socket counts from the moment it is handed out ------------------


def test_an_open_attach_counts_as_a_client_before_its_connection_is_set_up() -> None:
    """KillIf reads clients_of right after OpenAttach's reply: the socket it handed out
    is attached (a resource the kill would close) before the loop sets the session up."""

    async def test() -> None:
        hub, directory = make_hub()
        pane = directory.add(1)
        client = open_attached(hub, 1)
        assert hub.clients_of(pane) == 1  # no loop turn in between
        await client.wait_for(proto.Repaint)
        assert hub.clients_of(pane) == 1  # once set up: counted once, not twice
        await client.send(proto.Detach())
        await client.wait_closed()
        await until(lambda: hub.clients_of(pane) == 0, "the client gone")

    run(test)


def test_an_open_attach_whose_connection_fails_to_set_up_is_not_counted() -> None:
    async def test() -> None:
        hub, directory = make_hub()
        pane = directory.add(1)
        directory.remove(pane)  # closed before its session connects
        with contextlib.suppress(Exception):
            open_attached(hub, 1)
        await until(lambda: hub.clients_of(pane) == 0, "nothing counted")

    run(test)


def test_a_paste_reaches_the_pane_filtered_and_bracketed_when_asked() -> None:
    async def test() -> None:
        hub, directory = make_hub()
        pane = directory.add(1)
        client = connect(hub)
        await client.send(proto.Hello(), proto.Attach(1))
        assert (await client.wait_for(proto.Welcome)).paste
        await client.wait_for(proto.Attached)
        await client.send(proto.Paste(b"ls\nrm -rf ~\x1b[201~x\n"))
        await until(lambda: pane.typed, "the paste typed")
        assert bytes(pane.typed) == b"ls\rrm -rf ~[201~x\r"
        pane.typed.clear()
        pane.pastes_bracketed = True
        await client.send(proto.Paste(b"echo hi\n"))
        await until(lambda: pane.typed, "the bracketed paste typed")
        assert bytes(pane.typed) == b"\x1b[200~echo hi\r\x1b[201~"

    run(test)
