"""One launch's application-resurrection endpoint and the connections made to it.

`<runtime>/launch/<random>/socket` (directory 0700, socket 0600), given to the
launch as APPLICATION_RESURRECTION_SOCKET, bound to that launch: its offer (the
reference a restored launch gets back, or none), its checkpoints, its owner
rule. It is closed and removed when the pane's process exits; a client that
disconnects is not an exit. A connection must say hello within
HELLO_TIMEOUT_SECONDS; a refused hello gets exactly one answer, then the
connection is closed. A checkpoint is acknowledged only once it is durably on
disk; a failure to persist answers checkpoint_failed and stops the endpoint.
mux never interprets a reference and never executes anything from a message.
A connection's requests are answered one at a time, in order; while
QUEUED_REQUESTS of them wait, that connection is not read, so a client that
writes faster than checkpoints become durable cannot grow the service's memory
(docs/resurrection-protocol.md#the-endpoint, #messages).
"""

import asyncio
import contextlib
import logging
import os
import secrets
import shutil
import socket
from pathlib import Path
from typing import Protocol

from mux.protocol import resurrection as ar
from mux.resurrection.checkpoints import CheckpointProblem, CheckpointStore, CheckpointWriter
from mux.resurrection.ownership import verify_owner
from mux.system.accepting import SETTING_UP, accept_with_credentials, serve
from mux.system.durable import DurableWriteError
from mux.system.shared_reader import SharedReader, in_turn

log = logging.getLogger(__name__)

HELLO_TIMEOUT_SECONDS = 5.0
QUEUED_REQUESTS = 8  # of a connection, waiting their turn: enough for a client that pipelines


class Launch(Protocol):
    """What an endpoint needs of its pane."""

    @property
    def pid(self) -> int: ...
    @property
    def is_running(self) -> bool: ...
    def foreground_group(self) -> int | None: ...
    def checkpoint_changed(self, generation: int | None) -> None: ...


class Endpoint:
    def __init__(
        self,
        sock: socket.socket,
        directory: Path,
        loop: asyncio.AbstractEventLoop,
        store: CheckpointStore,
        *,
        invocation: str,
        offer: str | None,
        shell_launch: bool,
        hello_seconds: float = HELLO_TIMEOUT_SECONDS,
        shared_reader: SharedReader | None = None,
    ) -> None:
        """Serve the listening `sock` (bound at `directory`/socket); see `open`, `resumed`."""
        self.directory = directory
        self.store = store
        self.invocation = invocation
        self.offer = offer
        self.shell_launch = shell_launch
        self.hello_seconds = hello_seconds
        self.launch: Launch | None = None  # set once the program runs (bind)
        self.stopped = False
        self.frozen = False  # the final snapshot is being taken: no new request
        self._loop = loop
        # A dict as a set: empty, a quarter of an empty set (most programs never connect).
        self._connections: dict[_Connection, None] = {}
        self.checkpoints = CheckpointWriter(store, invocation, loop, self._checkpoint_changed)
        self._socket = sock
        sock.setblocking(False)
        # Connections are rare: the listening socket waits in the shared reader, which
        # costs a pane less than a reader of its own on the loop.
        self._acceptor = in_turn(loop, shared_reader)
        self._acceptor.add_reader(sock.fileno(), self._accept)

    @classmethod
    def open(
        cls,
        parent: Path,
        loop: asyncio.AbstractEventLoop,
        store: CheckpointStore,
        *,
        invocation: str,
        offer: str | None,
        shell_launch: bool,
        hello_seconds: float = HELLO_TIMEOUT_SECONDS,
        shared_reader: SharedReader | None = None,
    ) -> "Endpoint":
        """A new endpoint in a new private directory under `parent`; OSError if it cannot
        be made (and nothing is left behind)."""
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(parent, 0o700)
        directory = parent / secrets.token_hex(8)
        directory.mkdir(mode=0o700)
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            old_umask = os.umask(0o177)
            try:
                sock.bind(str(directory / "socket"))
            finally:
                os.umask(old_umask)
            sock.listen(8)
        except OSError:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return cls(
            sock,
            directory,
            loop,
            store,
            invocation=invocation,
            offer=offer,
            shell_launch=shell_launch,
            hello_seconds=hello_seconds,
            shared_reader=shared_reader,
        )

    @property
    def path(self) -> Path:
        """The socket (made when asked: a pane's endpoint is asked once, at its launch)."""
        return self.directory / "socket"

    def bind(self, launch: Launch) -> None:
        self.launch = launch

    # -- graceful upgrade -------------------------------------------------------------

    def fileno(self) -> int:
        return self._socket.fileno()

    @classmethod
    def resumed(
        cls,
        fd: int,
        directory: Path,
        loop: asyncio.AbstractEventLoop,
        store: CheckpointStore,
        *,
        invocation: str,
        offer: str | None,
        shell_launch: bool,
        hello_seconds: float = HELLO_TIMEOUT_SECONDS,
        shared_reader: SharedReader | None = None,
    ) -> "Endpoint":
        """The endpoint a previous muxd handed over, on the socket it left open: the
        application's path stays valid across the upgrade."""
        sock = socket.socket(fileno=fd)
        sock.set_inheritable(False)
        return cls(
            sock,
            directory,
            loop,
            store,
            invocation=invocation,
            offer=offer,
            shell_launch=shell_launch,
            hello_seconds=hello_seconds,
            shared_reader=shared_reader,
        )

    # -- connections ----------------------------------------------------------------

    def _accept(self) -> None:
        accepted = accept_with_credentials(self._socket, "a resurrection")
        if accepted is None:
            return
        conn, peer = accepted
        # An unknown peer is answered like a stranger (invalid_handshake), never trusted.
        connection = _Connection(self, *((peer.pid, peer.uid) if peer else (None, -1)))
        self._connections[connection] = None

        def failed(error: BaseException | str) -> None:
            log.warning("a resurrection connection could not be set up: %s", error)
            self.forget(connection)

        serve(self._loop, conn, connection, SETTING_UP, failed)

    @property
    def registrations(self) -> int:
        """Connections whose hello was accepted (an application talking to mux)."""
        return sum(1 for connection in self._connections if connection.registered)

    def forget(self, connection: "_Connection") -> None:
        self._connections.pop(connection, None)

    # -- requests (the owner's, after its hello) --------------------------------------

    def _checkpoint_changed(self, generation: int | None) -> None:
        if self.launch is not None:
            self.launch.checkpoint_changed(generation)  # None: cleared

    async def quiesce(self) -> None:
        """For the final snapshot: no new request is taken, and every write in flight
        has finished, when it returns."""
        self.frozen = True
        await self.checkpoints.idle()

    def withdraw_offer(self) -> None:
        """The user has moved on (a later prompt or command): no later hello gets the
        reference, and the connections made so far are dropped."""
        self.offer = None
        for connection in list(self._connections):
            connection.close()

    def stop(self, why: str) -> None:
        """No more requests: every connection is closed, new ones are refused."""
        if not self.stopped:
            log.error("resurrection endpoint stopped: %s", why)
        self.stopped = True
        for connection in list(self._connections):
            connection.close()

    def close(self) -> None:
        """The launch is over: the socket and its directory go."""
        self.stopped = True
        with contextlib.suppress(ValueError, OSError):
            self._acceptor.remove_reader(self._socket.fileno())
        self._socket.close()
        for connection in list(self._connections):
            connection.close()
        self.checkpoints.stop_telling()
        shutil.rmtree(self.directory, ignore_errors=True)


class _Connection(asyncio.Protocol):
    def __init__(self, endpoint: Endpoint, peer_pid: int | None, peer_uid: int) -> None:
        self._endpoint = endpoint
        self._peer_pid = peer_pid
        self._peer_uid = peer_uid
        self._decoder = ar.LineDecoder()
        self._transport: asyncio.Transport | None = None
        self._application: str | None = None  # set by a successful hello
        self._requests: asyncio.Queue[bytes] = asyncio.Queue(QUEUED_REQUESTS)
        self._worker: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False

    @property
    def registered(self) -> bool:
        return self._application is not None and not self._closed

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self._endpoint.hello_seconds, self._hello_timed_out)

    def data_received(self, data: bytes) -> None:
        try:
            self._decoder.receive_data(data)
        except ar.Violation as e:
            self._violation(e)
            return
        self._take_lines()

    def _take_lines(self) -> None:
        """Move complete lines from the decoder to the queue while it has room; read the
        connection only while it has (the lines left stay in the decoder, in order)."""
        while not self._closed and not self._requests.full():
            line = self._decoder.next_line()
            if line is None:
                break
            if self._application is None:
                self._hello(line)
            else:
                self._requests.put_nowait(line)
        if self._transport is None or self._closed:
            return
        if self._requests.full():
            self._transport.pause_reading()
        else:  # the decoder holds no complete line any more
            self._transport.resume_reading()

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
        if self._worker is not None:
            self._worker.cancel()
        self._endpoint.forget(self)

    # -- the hello ------------------------------------------------------------------

    def _hello_timed_out(self) -> None:
        self._reject(ar.ErrorCode.INVALID_HANDSHAKE, "no hello in time")

    def _hello(self, line: bytes) -> None:
        if self._timer is not None:
            self._timer.cancel()
        endpoint = self._endpoint
        try:
            application = ar.parse_hello(line)
            launch = endpoint.launch
            if endpoint.stopped or launch is None or not launch.is_running:
                raise ar.Violation(ar.ErrorCode.LAUNCH_UNAVAILABLE, "the launch is not available")
            verify_owner(
                peer_pid=self._peer_pid,
                peer_uid=self._peer_uid,
                shell_launch=endpoint.shell_launch,
                launch_pid=launch.pid,
                foreground_group=launch.foreground_group,
            )
        except ar.Violation as e:
            self._reject(e.code, str(e))
            return
        self._application = application
        self._write(ar.restore_offer(endpoint.offer))
        self._worker = asyncio.get_running_loop().create_task(self._serve_requests())

    # -- requests, one at a time, in order ---------------------------------------------

    async def _serve_requests(self) -> None:
        assert self._application is not None
        while not self._closed:
            line = await self._requests.get()
            self._take_lines()  # there is room again
            if self._endpoint.frozen:
                return  # the service is stopping: the snapshot holds what was acknowledged
            try:
                request = ar.parse_request(line)
            except ar.Violation as e:
                self._violation(e)
                return
            checkpoints = self._endpoint.checkpoints
            try:
                if isinstance(request, ar.Checkpoint):
                    generation = await checkpoints.write(self._application, request.reference)
                    self._write(ar.checkpointed(generation))
                else:
                    await checkpoints.clear()
                    self._write(ar.cleared())
            except (DurableWriteError, CheckpointProblem, OSError) as e:
                self._write(ar.checkpoint_failed())
                self._endpoint.stop(f"a checkpoint could not be saved: {e}")
                return

    # -- answers ----------------------------------------------------------------------

    def _violation(self, error: ar.Violation) -> None:
        if self._application is None:
            self._reject(error.code, str(error))
        else:
            self._write(ar.request_error(error.code))
            self.close()

    def _reject(self, code: ar.ErrorCode, why: str) -> None:
        """Exactly one answer, then close."""
        log.info("resurrection hello refused (%s): %s", code, why)
        self._write(ar.rejection(code))
        self.close()

    def _write(self, data: bytes) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
        if self._transport is not None:
            self._transport.close()
