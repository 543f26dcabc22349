"""The connections on mux.sock that have not said HELLO yet: at most `max_pending` of
them at once, each for at most `seconds` (docs/attach-protocol.md#limits).

A connection costs the service a descriptor and a buffer before it has said who it
is; without these bounds a program of the user's could hold a thousand of them open
for ever. The HELLO itself is bounded in size by the codec (MAX_HELLO), so the
memory they can take is bounded too. Connections from `OpenAttach` come attached
already and are never counted here.
"""

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from typing import Generic, TypeVar

from mux.protocol import attach as proto
from mux.protocol.attach_conversation import LIMIT_EXCEEDED, ServiceConversation

log = logging.getLogger(__name__)

S = TypeVar("S")  # a session, told apart by identity


class AwaitingHello(Generic[S]):
    def __init__(self, loop: asyncio.AbstractEventLoop, seconds: float, max_pending: int) -> None:
        """`seconds`, `max_pending`: the settings attach_hello_seconds, attach_max_pending."""
        self._loop = loop
        self.seconds = seconds
        self.max_pending = max_pending
        self._deadlines: dict[S, asyncio.TimerHandle] = {}
        self._full_said = False  # the log says once that the cap is reached, not per refusal

    def __len__(self) -> int:
        return len(self._deadlines)

    @property
    def has_room(self) -> bool:
        return len(self._deadlines) < self.max_pending

    def add(self, session: S, overdue: Callable[[str], None]) -> None:
        """Count `session` until `discard`; past the deadline `overdue` hears why it ends."""
        why = f"no HELLO within {self.seconds:g} s (the setting attach_hello_seconds)"
        self._deadlines[session] = self._loop.call_later(self.seconds, overdue, why)

    def discard(self, session: S) -> None:
        """`session` said HELLO, or is gone."""
        deadline = self._deadlines.pop(session, None)
        if deadline is not None:
            deadline.cancel()
        if len(self._deadlines) < self.max_pending // 2:
            self._full_said = False

    def refuse(self, conn: socket.socket) -> None:
        """Close `conn` at once, with an ERROR saying which limit it met (the socket is new,
        so a frame this small fits its buffer; a peer already gone is not told)."""
        message = (
            f"{self.max_pending} connections are already waiting to say HELLO, as many as "
            "mux takes (the setting attach_max_pending); try again later"
        )
        if not self._full_said:
            log.warning("attach socket: %s; more are closed at once", message)
            self._full_said = True
        data = ServiceConversation().send(proto.Error(LIMIT_EXCEEDED, message))
        with contextlib.suppress(OSError):
            conn.send(data)
        conn.close()
