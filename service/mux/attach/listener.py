"""Accepting connections on the attach socket, checking each peer's uid.

A connection from the service's own user is handed to the AttachHub, which
speaks the attach protocol on it; any other peer is closed unanswered, before
a byte is read.
"""

import asyncio
import contextlib
import logging
import os
import socket
from typing import TYPE_CHECKING

from mux.system.accepting import accept_with_credentials

if TYPE_CHECKING:
    from mux.attach.hub import AttachHub

log = logging.getLogger(__name__)


class AttachListener:
    def __init__(
        self, sock: socket.socket, loop: asyncio.AbstractEventLoop, owned_path: str | None
    ) -> None:
        """`owned_path`: where muxd bound the socket itself (removed at close); None when
        a service manager owns it (it stays, to start the next muxd)."""
        self.socket = sock
        self.owned_path = owned_path
        self._loop = loop
        self.hub: AttachHub | None = None  # set once the pane table exists
        sock.setblocking(False)
        loop.add_reader(sock.fileno(), self._accept)

    def _accept(self) -> None:
        accepted = accept_with_credentials(self.socket, "an attach")
        if accepted is None:
            return
        conn, peer = accepted
        if peer is None or peer.uid != os.getuid() or self.hub is None:
            if peer is not None and peer.uid != os.getuid():
                log.warning("attach connection from uid %d (pid %s) refused", peer.uid, peer.pid)
            conn.close()
            return
        self.hub.accept(conn, peer.pid)

    def pause(self) -> None:
        """Stop accepting (connections wait in the backlog)."""
        self._loop.remove_reader(self.socket.fileno())

    def resume(self) -> None:
        self._loop.add_reader(self.socket.fileno(), self._accept)

    def close(self) -> None:
        self._loop.remove_reader(self.socket.fileno())
        self.socket.close()
        if self.owned_path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.owned_path)
