"""The data plane: the attach socket `<runtime>/mux.sock` and the hub behind it.

The socket comes from the service manager (socket activation), from the muxd
this one replaced in an upgrade, or is bound here (docs/attach-protocol.md).
A stop or an upgrade first tells attached clients why and gives them a moment
to read their last frames.
"""

import asyncio
import logging
import socket

from mux.attach.hub import AttachHub
from mux.attach.listener import AttachListener
from mux.config import Settings
from mux.panes.table import PaneTable
from mux.protocol.attach_conversation import SERVICE_STOPPING, SERVICE_UPGRADING
from mux.system.activation import BOUND_BY_MUXD, ActivationError, attach_listener
from mux.system.paths import Paths

log = logging.getLogger(__name__)

# How long a stop or an upgrade waits for attached clients to be sent their last frames.
ATTACH_FAREWELL_SECONDS = 1.0


class AttachPlane:
    def __init__(self, settings: Settings, paths: Paths) -> None:
        self._settings = settings
        self._paths = paths
        self._listener: AttachListener | None = None
        self.hub: AttachHub | None = None

    def open(
        self,
        loop: asyncio.AbstractEventLoop,
        inherited: tuple[int, str | None] | None,
        activation: list[tuple[int, str]],
    ) -> None:
        """Listen; `inherited`: (fd, path muxd bound itself or None) from an upgrade or
        the fd store; `activation`: the socket-activation fds systemd passed. Without
        a socket mux still serves D-Bus (the reason is logged)."""
        if inherited is not None:
            fd, owned_path = inherited
            sock = socket.socket(fileno=fd)
            sock.set_inheritable(False)
            self._listener = AttachListener(sock, loop, owned_path)
            return
        try:
            sock, origin = attach_listener(self._paths.attach_socket, activation)
        except (ActivationError, OSError) as e:
            log.warning("no attach socket: %s", e)
            return
        log.info("attach socket %s (%s)", self._paths.attach_socket, origin)
        owned = str(self._paths.attach_socket) if origin == BOUND_BY_MUXD else None
        self._listener = AttachListener(sock, loop, owned)

    def serve(self, loop: asyncio.AbstractEventLoop, table: PaneTable) -> None:
        """Connections are served once the pane table exists."""
        settings = self._settings
        self.hub = AttachHub(
            table,
            loop,
            settings.attach_client_buffer_bytes,
            hello_seconds=settings.attach_hello_seconds,
            max_pending=settings.attach_max_pending,
        )
        if self._listener is not None:
            self._listener.hub = self.hub

    @property
    def inherited(self) -> tuple[int, str | None] | None:
        """What the next muxd inherits: (fd, owned path)."""
        if self._listener is None:
            return None
        return self._listener.socket.fileno(), self._listener.owned_path

    async def end_sessions_for_upgrade(self) -> None:
        """Tell attached clients to reconnect, and let them go before the exec.

        No new connection is accepted meanwhile (the new muxd accepts them, on
        the same socket); each session's queued frames get a moment to reach
        the client, so the ServiceUpgrading ERROR is seen, not just an EOF.
        Clients reconnect to the same panes: ids survive the upgrade.
        """
        if self._listener is not None:
            self._listener.pause()
        await self._farewell(SERVICE_UPGRADING, "mux is being upgraded in place")

    def resume(self) -> None:
        """The upgrade failed: accept connections again."""
        if self._listener is not None:
            self._listener.resume()

    async def close(self) -> None:
        """At stop: tell every client, then close the socket."""
        await self._farewell(SERVICE_STOPPING, "mux is stopping")
        if self._listener is not None:
            self._listener.close()

    async def _farewell(self, code: str, message: str) -> None:
        if self.hub is not None:
            self.hub.close_all(code, message)
            await self.hub.wait_all_closed(ATTACH_FAREWELL_SECONDS)
