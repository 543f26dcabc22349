"""Every attach session, by pane: the one place a client subscribes to a pane's output.

Connections accepted on mux.sock and the sockets `OpenAttach` hands out both
end up here. The hub watches the pane table, so a pane's exit reaches its
clients as EXITED after the last of its output, and a closed pane ends them.

Connections on mux.sock that have not said HELLO are bounded in number and in
time (mux.attach.awaiting_hello); OpenAttach's need no HELLO.

The hub builds and drives its sessions; a session reaches back only through
the `SessionHost` protocol it declares, so the dependency points one way. The
hub works on any pane directory (`AttachHubOf`); `AttachHub` is muxd's, over
its pane table.
"""

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Sequence
from typing import Generic

from mux.attach.attachable import P, PaneDirectory
from mux.attach.awaiting_hello import AwaitingHello
from mux.attach.session import AttachSession, ClientFacts
from mux.panes.pane import Pane
from mux.protocol.attach_conversation import LIMIT_EXCEEDED
from mux.protocol.errors import MuxError, PreconditionFailed
from mux.system.accepting import serve
from mux.system.peer_terminal import NoPeerTerminal, open_peer_terminal
from mux.system.terminal_writer import TerminalWriter

log = logging.getLogger(__name__)


class AttachHubOf(Generic[P]):
    def __init__(
        self,
        table: PaneDirectory[P],
        loop: asyncio.AbstractEventLoop,
        client_buffer_bytes: int,
        *,
        hello_seconds: float = 5.0,
        max_pending: int = 64,
    ) -> None:
        """`hello_seconds`, `max_pending`: the settings attach_hello_seconds and
        attach_max_pending (their defaults here)."""
        self._table = table
        self._loop = loop
        self._buffer_limit = client_buffer_bytes
        self._sessions: set[AttachSession[P]] = set()
        self._by_pane: dict[int, set[AttachSession[P]]] = {}
        # OpenAttach sockets handed out whose sessions are not subscribed yet: the
        # connection is set up a few loop turns later, but the client holds an
        # attached socket from the reply on (KillIf must count it).
        self._connecting: dict[int, set[AttachSession[P]]] = {}
        self._starting: set[asyncio.Task[object]] = set()
        self._awaiting_hello: AwaitingHello[AttachSession[P]] = AwaitingHello(
            loop, hello_seconds, max_pending
        )
        self._all_closed = asyncio.Event()
        self._all_closed.set()
        table.add_observer(self)

    # -- connections ------------------------------------------------------------

    def accept(
        self,
        conn: socket.socket,
        peer_pid: int | None,
        attach_to: P | None = None,
        user: str | None = None,
    ) -> None:
        """Serve the attach protocol on `conn` (already checked to be our own user's).
        `user`: the bus connection that asked for it (OpenAttach), for the spawn ledger.
        A connection that is to say HELLO is closed at once, with an ERROR, when too many
        are waiting to already."""
        if attach_to is None and not self._awaiting_hello.has_room:
            self._awaiting_hello.refuse(conn)
            return
        session = AttachSession(self, peer_pid, self._buffer_limit, attach_to, user)
        self._sessions.add(session)
        self._all_closed.clear()
        if attach_to is None:
            self._awaiting_hello.add(session, lambda why: self._hello_overdue(session, why))
        else:
            self._connecting.setdefault(attach_to.id, set()).add(session)

        def failed(error: BaseException | str) -> None:
            log.warning("an attach connection could not be set up: %s", error)
            self.forget(session)

        serve(self._loop, conn, session, self._starting, failed)

    def open_attached(self, pane_id: int, user: str | None = None) -> socket.socket:
        """The client's end of a new socket pair whose other end is attached to the pane
        (OpenAttach). The caller hands it over and closes it."""
        pane = self._table.get(pane_id)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            ours.setblocking(False)
            self.accept(ours, None, attach_to=pane, user=user)
        except BaseException:
            ours.close()
            theirs.close()
            raise
        return theirs

    def _hello_overdue(self, session: AttachSession[P], why: str) -> None:
        self._awaiting_hello.discard(session)
        session.fail(LIMIT_EXCEEDED, why)  # (HELLO would have taken it off the account)

    def greeted(self, session: AttachSession[P]) -> None:
        self._awaiting_hello.discard(session)

    def forget(self, session: AttachSession[P]) -> None:
        self._awaiting_hello.discard(session)
        self._settled(session)
        self._sessions.discard(session)
        if not self._sessions:
            self._all_closed.set()

    def close_all(self, code: str, message: str) -> None:
        """End every session with an ERROR (the service stops or re-execs)."""
        for session in list(self._sessions):
            try:
                session.fail(code, message)
            except Exception:
                # One client that cannot be ended must not keep the others from
                # hearing why they are (nor the service from stopping).
                log.exception("ending attach client %s with %s failed", session.peer, code)

    async def wait_all_closed(self, timeout: float) -> None:
        """Until every session has been closed (its queued frames written), at most
        `timeout` seconds: a client that reads nothing does not hold anything up."""
        if self._sessions:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._all_closed.wait(), timeout)

    def __len__(self) -> int:
        return len(self._sessions)

    # -- subscriptions (the choke point for "who used this pane") ---------------

    def find(self, pane_id: int, client_pid: int | None) -> P:
        """Pane `pane_id`; 0 means the running pane used most recently.

        Never the pane the client itself runs in: its output would be fed back
        into it without end.
        """
        own = self._pane_running(client_pid)
        if pane_id == 0:
            return self._table.most_recently_used(excluding=own)
        pane = self._table.get(pane_id)
        if pane is own:
            raise PreconditionFailed(
                f"this client runs inside pane {pane_id}; attaching the pane to itself would "
                "feed its output back into it"
            )
        return pane

    def _pane_running(self, pid: int | None) -> P | None:
        """The pane whose session (the pane's process is its leader) `pid` belongs to."""
        if pid is None:
            return None
        try:
            session = os.getsid(pid)
        except OSError:
            return None
        if session <= 0:  # in a container, processes in init's session have session 0:
            return None  # that is not the pid 0 of a pane with no process (a held pane)
        return next((pane for pane in self._table if pane.pid == session), None)

    def subscribe(self, session: AttachSession[P], pane: P) -> None:
        """The one place every subscription to a pane's output passes: the spawn
        ledger marks it before the first byte is sent."""
        if not session.client.glance:  # (a thumbnail is no one's use of the pane)
            self._table.mark_use(pane, session.user)
        if not session.client.read_only:  # (watching is no use: it starts no lazily held pane)
            self.mark_used(pane)
        pane.add_output_sink(session.output, watching=session.client.read_only)
        self._by_pane.setdefault(pane.id, set()).add(session)
        self._settled(session)

    def _settled(self, session: AttachSession[P]) -> None:
        """`session` is subscribed or gone: no longer counted as connecting."""
        for pane_id, sessions in list(self._connecting.items()):
            sessions.discard(session)
            if not sessions:
                del self._connecting[pane_id]

    def unsubscribe(self, session: AttachSession[P], pane: P) -> None:
        sessions = self._by_pane.get(pane.id)
        if sessions is not None:
            sessions.discard(session)
            if not sessions:
                del self._by_pane[pane.id]
        with contextlib.suppress(ValueError):
            pane.remove_output_sink(session.output)
        sizing = [s for s in sessions or () if not s.client.read_only and s.client.size]
        if sizing and self.is_open(pane):  # the size of the client active last of those left
            latest = max(sizing, key=lambda other: other.client.last_active)
            try:
                self._fit(pane, latest.client)
            except MuxError as e:
                log.info("attach client %s: its size was refused: %s", latest.peer, e)

    def active(self, session: AttachSession[P], pane: P) -> MuxError | None:
        if session.client.read_only:
            return None
        session.client.last_active = time.monotonic()
        try:
            self._fit(pane, session.client)
        except MuxError as e:
            log.info("attach client %s: its size was refused: %s", session.peer, e)
            return e
        return None

    @staticmethod
    def _fit(pane: P, client: ClientFacts) -> None:
        """`pane` at the size of `client`'s terminal, unless it is a watcher's or unknown:
        the size rule is the client active last (tmux's default, `window-size latest`), so
        a small terminal that typed last, or left, never leaves a big one in a corner.
        MuxError when the pane refuses the size."""
        if client.size is None or client.read_only or not pane.is_live:
            return
        size = (client.size[0] - client.status_rows, client.size[1])  # (less its status line)
        if size != (pane.rows, pane.cols):
            pane.resize(*size)

    def clients(self, pane: P) -> list[ClientFacts]:
        """The clients attached to `pane` (ListClients), in the order they came."""
        return sorted(
            (session.client for session in self._by_pane.get(pane.id, ())),
            key=lambda client: client.serial,
        )

    def mark_used(self, pane: P) -> None:
        self._table.mark_used(pane)

    def terminal_of(self, peer_pid: int, fd: int) -> TerminalWriter | None:
        try:
            return TerminalWriter(open_peer_terminal(peer_pid, fd), self._loop)
        except NoPeerTerminal as e:
            log.info("attach client pid %d: its output is relayed: %s", peer_pid, e)
            return None

    def is_open(self, pane: P) -> bool:
        """`pane` is still in the table (not closed)."""
        try:
            return self._table.get(pane.id) is pane
        except MuxError:
            return False

    def clients_of(self, pane: P) -> int:
        """Attached clients of `pane` (someone looking: not glances), counting OpenAttach
        sockets still connecting."""
        connecting = self._connecting.get(pane.id, set())
        looking = {s for s in self._by_pane.get(pane.id, set()) if not s.client.glance}
        return len(looking | connecting)

    def repaint_all(self, pane: P) -> None:
        for session in list(self._by_pane.get(pane.id, ())):
            session.repaint()

    # -- the pane table's observer ----------------------------------------------

    def pane_added(self, pane: P) -> None:
        pass

    def pane_changed(self, pane: P, properties: Sequence[str]) -> None:
        # Resized (by a client, a D-Bus Resize...): every client sees it laid
        # out anew at the size it now has.
        if "Rows" in properties or "Cols" in properties:
            self.repaint_all(pane)

    def pane_exited(self, pane: P) -> None:
        for session in list(self._by_pane.get(pane.id, ())):
            session.pane_exited(pane)

    def pane_removed(self, pane: P) -> None:
        for session in list(self._by_pane.get(pane.id, ())):
            session.pane_closed(pane)


class AttachHub(AttachHubOf[Pane]):
    """muxd's hub, over its pane table."""
