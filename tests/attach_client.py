"""A plain blocking client of the attach protocol, for tests: frames in, frames out."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from mux.protocol import attach as proto
from tests.harness import DEFAULT_TIMEOUT

F = TypeVar("F", bound=proto.Frame)


class ProtocolClient:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.decoder = proto.FrameDecoder()
        self.frames: list[proto.Frame] = []  # everything received, in order
        self.closed = False

    @classmethod
    def connect(cls, path: Path) -> ProtocolClient:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(path))
        return cls(sock)

    def send(self, *frames: proto.Frame) -> None:
        # The service may hold our input back while the pane is busy: wait for it.
        self.sock.settimeout(DEFAULT_TIMEOUT)
        self.sock.sendall(b"".join(proto.encode(f) for f in frames))

    def attach(self, pane_id: int, size: tuple[int, int] | None = None) -> proto.Attached:
        frames: list[proto.Frame] = [proto.Hello()]
        if size is not None:
            frames.append(proto.Resize(*size))
        self.send(*frames, proto.Attach(pane_id))
        self.wait_for(proto.Welcome)
        return self.wait_for(proto.Attached)

    def receive(self, timeout: float) -> bool:
        """Read what arrives within `timeout`; False once the service closed the socket."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(1 << 20)
        except TimeoutError:
            return True
        except ConnectionResetError:
            data = b""  # closed with frames of ours unread (after what it had sent)
        if not data:
            self.closed = True
            return False
        self.decoder.receive_data(data)
        while (frame := self.decoder.next_frame()) is not None:
            self.frames.append(frame)
        return True

    def wait_until(
        self, condition: Callable[[], bool], what: str, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.closed:
                raise AssertionError(f"closed before {what}; got {self.kinds()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; got {self.kinds()}")
            self.receive(0.1)

    def wait_for(self, kind: type[F], timeout: float = DEFAULT_TIMEOUT) -> F:
        self.wait_until(
            lambda: any(isinstance(f, kind) for f in self.frames), kind.__name__, timeout
        )
        return next(f for f in self.frames if isinstance(f, kind))

    def wait_closed(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while self.receive(0.1):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the service did not close the connection; got {self.kinds()}"
                )

    def kinds(self) -> list[str]:
        """Frame kinds in order; an ERROR names its code and message, so a failure says why."""
        return [
            f"ERROR({f.code}: {f.message})" if isinstance(f, proto.Error) else f.kind.name
            for f in self.frames
        ]

    def screen_bytes(self) -> bytes:
        """REPAINT and OUTPUT payloads in order: what a terminal would be fed."""
        return b"".join(f.data for f in self.frames if isinstance(f, proto.Output | proto.Repaint))

    def output_text(self) -> str:
        return self.screen_bytes().decode(errors="replace")

    def close(self) -> None:
        self.sock.close()
