"""OpenAttach of a satellite's pane: a connection to its attach socket (forwarded by
the link), already attached, handed to the caller as a local OpenAttach's is
(docs/attach-protocol.md#openattach): the caller's first frames are ATTACHED
and REPAINT, or ERROR."""

import asyncio
import logging
import socket
from pathlib import Path

from mux.protocol import attach as proto
from mux.protocol.errors import Unavailable
from mux.system.socket_trust import UntrustedSocket, connect_trusted_async

log = logging.getLogger(__name__)

HANDSHAKE_SECONDS = 10.0


async def open_remote_attach(path: Path, pane_id: int, host: str) -> socket.socket:
    """Connect to the forwarded attach socket at `path`, greet, and attach `pane_id`;
    the WELCOME is read here, the rest is left for the caller."""
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(HANDSHAKE_SECONDS):
            # The forward's listener is the hub's own ssh, run as the user, in a
            # directory of the user's: anything else gets no HELLO (and no keys).
            sock = await connect_trusted_async(path)
    except UntrustedSocket as refusal:
        log.warning("host %s: %s", host, refusal)
        raise Unavailable(
            f"cannot attach to pane {pane_id} on {host}: its forwarded attach socket is not "
            "this user's (see muxd's log)"
        ) from None
    except (OSError, TimeoutError) as e:
        raise Unavailable(f"cannot attach to pane {pane_id} on {host}: {_why(e)}") from None
    try:
        async with asyncio.timeout(HANDSHAKE_SECONDS):
            await loop.sock_sendall(sock, proto.encode(proto.Hello()))
            decoder = proto.FrameDecoder()
            frame = None
            while frame is None:
                data = await loop.sock_recv(sock, 1)  # byte by byte: nothing past WELCOME
                if not data:
                    raise ConnectionResetError("closed")
                decoder.receive_data(data)
                frame = decoder.next_frame()
            if not isinstance(frame, proto.Welcome):
                raise ConnectionResetError(f"answered {type(frame).__name__}, not WELCOME")
            await loop.sock_sendall(sock, proto.encode(proto.Attach(pane_id)))
    except (OSError, TimeoutError, proto.ProtocolError) as e:
        sock.close()
        raise Unavailable(f"cannot attach to pane {pane_id} on {host}: {_why(e)}") from None
    sock.setblocking(True)
    return sock


def _why(error: Exception) -> str:
    strerror = error.strerror if isinstance(error, OSError) else None
    return strerror or str(error) or type(error).__name__
