"""Accepting a connection on a listening Unix socket, with its peer's credentials, and
handing it to an asyncio protocol: what the attach socket and the resurrection endpoints
share."""

import asyncio
import logging
import socket
from collections.abc import Callable

from mux.system.peercred import PeerCredentials, PeerUnknown, peer_credentials

log = logging.getLogger(__name__)


def accept_with_credentials(
    listening: socket.socket, what: str
) -> tuple[socket.socket, PeerCredentials | None] | None:
    """The next connection and who is on the other end (None: unknown, which never
    counts as the same user); None when there was nothing to accept after all."""
    try:
        conn, _ = listening.accept()
    except (BlockingIOError, InterruptedError):
        return None
    except OSError as e:
        log.warning("accepting %s connection failed: %s", what, e.strerror)
        return None
    try:
        peer: PeerCredentials | None = peer_credentials(conn)
    except PeerUnknown as e:
        log.warning("%s connection: %s", what, e)
        peer = None
    conn.setblocking(False)
    return conn, peer


# Tasks setting up accepted connections, for owners of many listeners that would
# otherwise each keep a set (an empty set is 0.2 KiB; a pane has a listener).
SETTING_UP: "set[asyncio.Task[object]]" = set()


def serve(
    loop: asyncio.AbstractEventLoop,
    conn: socket.socket,
    protocol: asyncio.Protocol,
    running: "set[asyncio.Task[object]]",
    failed: Callable[[BaseException | str], None],
) -> None:
    """Run `protocol` on the accepted `conn`. `running` keeps the setting-up task alive
    (the loop holds tasks weakly); `failed` hears why if it cannot be set up."""
    task = loop.create_task(loop.connect_accepted_socket(lambda: protocol, sock=conn))
    running.add(task)

    def done(task: "asyncio.Task[object]") -> None:
        running.discard(task)
        error = "cancelled" if task.cancelled() else task.exception()
        if error is not None:
            failed(error)

    task.add_done_callback(done)
