"""OpenAttach of a satellite's pane: a connection to its attach socket (forwarded by
the link), already attached, handed to the caller as a local OpenAttach's is
(docs/attach-protocol.md#openattach): the caller's first frames are ATTACHED
and REPAINT, or ERROR."""

import asyncio
import socket
from pathlib import Path

from mux.protocol import attach as proto
from mux.protocol.errors import Unavailable

HANDSHAKE_SECONDS = 10.0


async def open_remote_attach(path: Path, pane_id: int, host: str) -> socket.socket:
    """Connect to the forwarded attach socket at `path`, greet, and attach `pane_id`;
    the WELCOME is read here, the rest is left for the caller."""
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        async with asyncio.timeout(HANDSHAKE_SECONDS):
            await loop.sock_connect(sock, str(path))
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
        why = (e.strerror if isinstance(e, OSError) else None) or str(e) or type(e).__name__
        raise Unavailable(f"cannot attach to pane {pane_id} on {host}: {why}") from None
    sock.setblocking(True)
    return sock
