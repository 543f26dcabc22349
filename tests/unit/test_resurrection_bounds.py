"""A client that writes requests faster than checkpoints become durable does not grow
muxd's memory: the endpoint holds a few requests per connection and stops reading that
connection until there is room again; every request is still answered, once and in order
(docs/resurrection-protocol.md#messages). In process: the endpoint on a real asyncio loop,
a real Unix socket, a real file system whose fsync waits to be let through."""

from __future__ import annotations

import asyncio
import errno
import gc
import json
import os
import socket
import threading
import weakref
from pathlib import Path

from mux.protocol import resurrection as ar
from mux.resurrection.checkpoints import CheckpointStore
from mux.resurrection.endpoint import QUEUED_REQUESTS, Endpoint, _Connection
from mux.system.durable import FileOps
from tests.loop_support import ThisProcess, until

INVOCATION = "0123456789abcdef" * 2
REQUESTS = 300
REFERENCE_BYTES = 4000  # 300 requests: about 1.2 MB, several times what muxd may hold
CLIENT_SEND_BUFFER = 32 * 1024  # the kernel's share (Linux doubles it), known in advance
READ_CHUNK = 256 * 1024  # the most an asyncio transport reads at once
DEADLINE_SECONDS = 30.0


class SlowDisk:
    """Durable-write system calls whose fsync waits until `let_through` is set, recording
    the references in the order they reach the disk."""

    def __init__(self) -> None:
        self.let_through = threading.Event()
        self.references: list[str] = []

    def ops(self) -> FileOps:
        return FileOps(write=self._write, fsync=self._fsync)

    def _write(self, fd: int, data: bytes) -> int:
        self.references.append(json.loads(data)["reference"])
        return os.write(fd, data)

    def _fsync(self, fd: int) -> None:
        if not self.let_through.wait(3 * DEADLINE_SECONDS):  # outlasts the test's waits
            raise OSError(errno.EIO, "the test never let the fsync through")
        os.fsync(fd)


class PipeliningClient(threading.Thread):
    """Says hello, then writes all its requests at once without reading an answer; then
    reads every answer."""

    def __init__(self, path: Path, requests: list[bytes]) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.requests = requests
        self.all_sent = threading.Event()
        self.answers: list[bytes] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, CLIENT_SEND_BUFFER)
                sock.settimeout(DEADLINE_SECONDS)
                sock.connect(str(self.path))
                sock.sendall(ar.hello("flood"))
                with sock.makefile("rb") as answers:
                    assert ar.parse_offer(answers.readline().rstrip(b"\n")) is None
                    sock.sendall(b"".join(self.requests))
                    self.all_sent.set()
                    for _ in self.requests:
                        self.answers.append(answers.readline())
        except BaseException as e:
            self.error = e


def the_connection(endpoint: Endpoint) -> _Connection:
    (connection,) = endpoint._connections
    return connection


def test_a_flood_of_requests_is_held_back_and_every_one_answered_in_order(
    tmp_path: Path,
) -> None:
    disk = SlowDisk()
    store = CheckpointStore(tmp_path / "checkpoints", ops=disk.ops())
    references = [f"{i:04d}".ljust(REFERENCE_BYTES, "r") for i in range(REQUESTS)]

    async def test() -> None:
        loop = asyncio.get_running_loop()
        made = Endpoint.open(
            tmp_path / "launch", loop, store, invocation=INVOCATION, offer=None, shell_launch=False
        )
        launch = ThisProcess()
        made.bind(launch)
        client = PipeliningClient(made.path, [ar.checkpoint_request(r) for r in references])
        client.start()
        await until(
            lambda: made.registrations == 1 or client.error is not None, "hello", DEADLINE_SECONDS
        )
        connection = the_connection(made)
        transport = connection._transport
        assert transport is not None
        await until(
            lambda: not transport.is_reading() and not transport.is_closing(),
            "muxd stops reading the flood (the connection still open)",
            DEADLINE_SECONDS,
        )
        # What muxd holds of this connection is bounded, whatever the client writes.
        assert connection._requests.qsize() <= QUEUED_REQUESTS
        assert connection._decoder.pending <= READ_CHUNK + ar.MAX_LINE  # a read, a tail
        assert not client.all_sent.is_set(), "the client was not held back"

        disk.let_through.set()
        await until(lambda: not client.is_alive(), "every answer arrives", DEADLINE_SECONDS)
        assert client.error is None
        assert client.all_sent.is_set()  # muxd read on once there was room again
        generations = [
            ar.parse_acknowledgement(answer.rstrip(b"\n"), "checkpointed")
            for answer in client.answers
        ]
        assert generations == list(range(1, REQUESTS + 1))
        assert disk.references == references  # none dropped, none reordered
        assert launch.generations == generations
        assert store.read(INVOCATION).reference == references[-1]
        made.close()

    async def test_and_let_through() -> None:
        try:
            await test()
        finally:
            disk.let_through.set()  # a failed test leaves no fsync waiting

    asyncio.run(test_and_let_through())


def test_requests_in_one_write_with_the_hello_are_all_answered(tmp_path: Path) -> None:
    """More requests than the queue holds, all in the very first data muxd reads."""
    store = CheckpointStore(tmp_path / "checkpoints")
    count = 3 * QUEUED_REQUESTS

    async def test() -> None:
        loop = asyncio.get_running_loop()
        made = Endpoint.open(
            tmp_path / "launch", loop, store, invocation=INVOCATION, offer="old", shell_launch=False
        )
        made.bind(ThisProcess())
        reader, writer = await asyncio.open_unix_connection(str(made.path))
        writer.write(
            ar.hello("burst")
            + b"".join(ar.checkpoint_request(f"ref-{i}") for i in range(count))
            + ar.clear_request()
        )
        await writer.drain()
        offer = await asyncio.wait_for(reader.readline(), DEADLINE_SECONDS)
        assert ar.parse_offer(offer.rstrip(b"\n")) == "old"
        for i in range(count):
            answer = await asyncio.wait_for(reader.readline(), DEADLINE_SECONDS)
            assert ar.parse_acknowledgement(answer.rstrip(b"\n"), "checkpointed") == i + 1
        answer = await asyncio.wait_for(reader.readline(), DEADLINE_SECONDS)
        assert ar.parse_acknowledgement(answer.rstrip(b"\n"), "cleared") is None
        assert not store.path_for(INVOCATION).exists()
        writer.close()
        await writer.wait_closed()
        made.close()

    asyncio.run(test())


def test_a_closed_endpoint_is_freed_without_the_collector(tmp_path: Path) -> None:
    """Every pane that ends closes its endpoint: nothing of it may wait for a full
    collection (its checkpoint writer held the endpoint's own method)."""
    store = CheckpointStore(tmp_path / "checkpoints")

    async def test() -> None:
        loop = asyncio.get_running_loop()
        made = Endpoint.open(
            tmp_path / "launch", loop, store, invocation=INVOCATION, offer=None, shell_launch=False
        )
        made.bind(ThisProcess())
        made.close()
        gone = weakref.ref(made)
        gc.disable()
        try:
            del made
            assert gone() is None
        finally:
            gc.enable()

    asyncio.run(test())
