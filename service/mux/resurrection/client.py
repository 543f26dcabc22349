"""A client of application-resurrection/1 (docs/resurrection-protocol.md), for
applications that run in mux.

    client = ResurrectionClient.connect("notes")     # None outside mux
    if client is not None and client.offer is not None:
        reopen(client.offer)                         # what you checkpointed last time
    ...
    client.checkpoint(path_of_my_state)              # durable when it returns

`AsyncResurrectionClient` is the same for asyncio. Any refusal, or an answer
this client does not understand, raises `Refused` with its code: a client
fails closed. The reference is opaque to mux: put in it what you need to find
your state again (a path, a session id), never the state itself (4096 bytes).
"""

import asyncio
import os
import socket

from mux.protocol import resurrection as ar
from mux.protocol.environment import ENDPOINT_VARIABLE
from mux.protocol.resurrection import Refused

__all__ = ["AsyncResurrectionClient", "Refused", "ResurrectionClient"]

TIMEOUT_SECONDS = 10.0


def endpoint_path() -> str | None:
    path = os.environ.get(ENDPOINT_VARIABLE, "")
    return path if os.path.isabs(path) else None


class ResurrectionClient:
    def __init__(self, sock: socket.socket, offer: str | None) -> None:
        self._sock = sock
        self._file = sock.makefile("rb")
        self.offer = offer  # the reference handed back (None: start afresh)
        self._application = ""
        self._path = ""
        self._timeout = TIMEOUT_SECONDS

    @classmethod
    def connect(
        cls, application: str, path: str | None = None, timeout: float = TIMEOUT_SECONDS
    ) -> "ResurrectionClient | None":
        """Say hello; None when this launch has no endpoint (not in mux, or disabled)."""
        path = path or endpoint_path()
        if path is None:
            return None
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(path)
            sock.sendall(ar.hello(application))
            client = cls(sock, None)
            client.offer = ar.parse_offer(client._line())
        except BaseException:
            sock.close()
            raise
        client._application, client._path, client._timeout = application, path, timeout
        return client

    def _request(self, data: bytes, expected: str) -> int | None:
        """One request; if mux closed the connection (it was upgraded in place: the
        endpoint is still there), say hello again and send it once more."""
        for attempt in (1, 2):
            try:
                self._sock.sendall(data)
                return ar.parse_acknowledgement(self._line(), expected)
            except (Refused, OSError) as e:
                closed = isinstance(e, OSError) or e.code == "connection_closed"
                if attempt == 2 or not closed:
                    raise
            again = ResurrectionClient.connect(self._application, self._path, self._timeout)
            assert again is not None
            self.close()
            self._sock, self._file = again._sock, again._file
        raise AssertionError("unreachable")

    def _line(self) -> bytes:
        line = self._file.readline(ar.MAX_LINE + 1)
        if not line.endswith(b"\n"):
            raise Refused("connection_closed" if not line else "invalid_answer")
        return line[:-1]

    def checkpoint(self, reference: str) -> int:
        """Hand mux `reference`; returns once it is durably on disk (its generation)."""
        generation = self._request(ar.checkpoint_request(reference), "checkpointed")
        assert generation is not None
        return generation

    def clear(self) -> None:
        """Nothing to give back next time; durably so when it returns."""
        self._request(ar.clear_request(), "cleared")

    def close(self) -> None:
        self._file.close()
        self._sock.close()

    def __enter__(self) -> "ResurrectionClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncResurrectionClient:
    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, offer: str | None
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.offer = offer

    @classmethod
    async def connect(
        cls, application: str, path: str | None = None, timeout: float = TIMEOUT_SECONDS
    ) -> "AsyncResurrectionClient | None":
        path = path or endpoint_path()
        if path is None:
            return None
        reader, writer = await asyncio.wait_for(
            asyncio.open_unix_connection(path, limit=ar.MAX_LINE + 1), timeout
        )
        client = cls(reader, writer, None)
        try:
            writer.write(ar.hello(application))
            client.offer = ar.parse_offer(await asyncio.wait_for(client._line(), timeout))
        except BaseException:
            writer.close()
            raise
        return client

    async def _line(self) -> bytes:
        try:
            line = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError:
            raise Refused("connection_closed") from None
        except asyncio.LimitOverrunError:
            raise Refused("invalid_answer") from None
        return line[:-1]

    async def checkpoint(self, reference: str) -> int:
        self._writer.write(ar.checkpoint_request(reference))
        generation = ar.parse_acknowledgement(await self._line(), "checkpointed")
        assert generation is not None
        return generation

    async def clear(self) -> None:
        self._writer.write(ar.clear_request())
        ar.parse_acknowledgement(await self._line(), "cleared")

    async def close(self) -> None:
        self._writer.close()
        await self._writer.wait_closed()
