"""Accepting connections on the attach socket, checking each peer's uid.

The attach protocol itself arrives with its own issue (#5). Until then a
connection from the service's own user is told so in one line and closed, so
that socket activation works end to end; any other peer is closed unanswered.
"""

import asyncio
import contextlib
import logging
import os
import socket

from mux.peercred import PeerUnknown, peer_credentials

log = logging.getLogger(__name__)

NOT_YET = b"mux: attaching is not available in this version of mux\n"


class AttachListener:
    def __init__(
        self, sock: socket.socket, loop: asyncio.AbstractEventLoop, owned_path: str | None
    ) -> None:
        """`owned_path`: where muxd bound the socket itself (removed at close); None when
        a service manager owns it (it stays, to start the next muxd)."""
        self.socket = sock
        self.owned_path = owned_path
        self._loop = loop
        sock.setblocking(False)
        loop.add_reader(sock.fileno(), self._accept)

    def _accept(self) -> None:
        try:
            conn, _ = self.socket.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:
            log.warning("accepting an attach connection failed: %s", e.strerror)
            return
        with conn:
            try:
                peer = peer_credentials(conn)
            except PeerUnknown as e:
                log.warning("attach connection refused: %s", e)
                return
            if peer.uid != os.getuid():
                log.warning("attach connection from uid %d (pid %s) refused", peer.uid, peer.pid)
                return
            conn.setblocking(False)
            with contextlib.suppress(OSError):
                conn.send(NOT_YET)

    def close(self) -> None:
        self._loop.remove_reader(self.socket.fileno())
        self.socket.close()
        if self.owned_path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.owned_path)
