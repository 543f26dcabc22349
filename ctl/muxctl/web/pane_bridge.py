"""One browser tab attached to one pane: the page's WebSocket on one side, an attach
connection to muxd (muxctl.pane_link, as the window view's) on the other
(docs/web.md#the-pane-socket).

To the page: the pane's output as binary frames; as JSON text frames, `attached`,
`repaint` (a whole screen follows: start blank), `reconnecting` (muxd is upgrading)
and `ended` with why. From the page: keys and pastes as binary frames, sizes and
flow control as text (muxctl.web.browser_messages). Nothing is read from muxd while
the page says it is behind, or while the WebSocket has not taken what was sent:
muxd then treats this client as any slow one (the latest screen, not every byte).
"""

import asyncio
import contextlib
import json
import time
from pathlib import Path

from aiohttp import WSMsgType, web

from mux.protocol import attach as proto
from muxctl.attaching import RECONNECT_TIMEOUT_SECONDS
from muxctl.errors import CtlError, SocketRefused
from muxctl.pane_link import (
    PaneAttached,
    PaneEnded,
    PaneEvent,
    PaneInterrupted,
    PaneLink,
    PaneOutput,
)
from muxctl.web import browser_messages
from muxctl.web.browser_messages import BadMessage, Pause, Resume, SizeChanged
from muxctl.web.fd_ready import readable

INPUT_BACKLOG = 1 << 20  # keys muxd has not taken yet, before the page's are left unread
RECONNECT_POLL_SECONDS = 0.05
POLICY_VIOLATION = 1008  # WebSocket close code


class PaneBridge:
    def __init__(
        self,
        socket: web.WebSocketResponse,
        attach_socket: Path,
        pane: int,
        size: tuple[int, int],
        *,
        read_only: bool,
    ) -> None:
        self._ws = socket
        self._attach_socket = attach_socket
        self._pane = pane
        self._size = size
        self._read_only = read_only
        self._link: PaneLink | None = None
        self._held = bytearray()  # keys typed while muxd upgrades, for its successor
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._drained = asyncio.Event()
        self._drained.set()

    async def run(self) -> None:
        """Until the page goes away or the pane's conversation ends."""
        try:
            self._link = self._connect()
        except CtlError as e:
            await self._end(str(e))
            return
        from_service = asyncio.create_task(self._from_service())
        try:
            await self._from_browser()
        finally:
            from_service.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await from_service
            self._close_link()

    # -- muxd -----------------------------------------------------------------------

    def _connect(self) -> PaneLink:
        link = PaneLink(self._attach_socket, self._pane, self._size, read_only=self._read_only)
        link.connect()
        if self._held:
            link.say(proto.Input(bytes(self._held)))
            self._held.clear()
        self._flush(link)
        return link

    def _close_link(self) -> None:
        if self._link is not None:
            loop = asyncio.get_running_loop()
            with contextlib.suppress(ValueError, OSError):
                loop.remove_writer(self._link.fileno())
            self._link.close()

    def _flush(self, link: PaneLink) -> None:
        """Write what muxd is owed; what its socket does not take now goes when it can."""
        link.write()
        loop = asyncio.get_running_loop()
        if link.outgoing.size and not link.ended:
            self._drained.clear()
            loop.add_writer(link.fileno(), self._flush_again, link)
        else:
            self._drained.set()

    def _flush_again(self, link: PaneLink) -> None:
        asyncio.get_running_loop().remove_writer(link.fileno())
        self._flush(link)

    async def _from_service(self) -> None:
        while True:
            await self._flowing.wait()
            link = self._link
            assert link is not None
            await readable(link.fileno())
            for message in _messages(link.receive(), self._read_only):
                if isinstance(message, PaneInterrupted):
                    if not await self._reconnect():
                        return
                    break
                if isinstance(message, PaneEnded):
                    await self._end(message.why)
                    return
                if isinstance(message, bytes):
                    await self._ws.send_bytes(message)
                else:
                    await self._ws.send_str(json.dumps(message))

    async def _reconnect(self) -> bool:
        """The same pane again after muxd's upgrade (its successor listens on the same
        socket within moments); False when it did not come back (the page is told)."""
        await self._ws.send_str(json.dumps({"type": "reconnecting"}))
        self._close_link()
        self._link = None
        until = time.monotonic() + RECONNECT_TIMEOUT_SECONDS
        while self._link is None:
            try:
                self._link = self._connect()
            except SocketRefused as e:  # not mux coming back: a socket not the user's
                await self._end(str(e))
                return False
            except CtlError:
                if time.monotonic() > until:
                    await self._end("mux did not come back after its upgrade")
                    return False
                await asyncio.sleep(RECONNECT_POLL_SECONDS)
        return True

    async def _end(self, why: str) -> None:
        if not self._ws.closed:
            await self._ws.send_str(json.dumps({"type": "ended", "why": why}))
            await self._ws.close()

    # -- the page -------------------------------------------------------------------

    async def _from_browser(self) -> None:
        async for message in self._ws:
            if message.type == WSMsgType.BINARY:
                await self._type(message.data)
            elif message.type == WSMsgType.TEXT:
                try:
                    self._control(browser_messages.parse(message.data))
                except BadMessage as e:
                    await self._ws.close(code=POLICY_VIOLATION, message=str(e).encode())
            else:
                break

    async def _type(self, data: bytes) -> None:
        link = self._link
        if self._read_only or not data:
            return
        if link is None:  # (between two muxds: kept for the next, within a bound)
            self._held += data[: max(0, INPUT_BACKLOG - len(self._held))]
            return
        link.say(proto.Input(data))
        self._flush(link)
        if link.outgoing.size > INPUT_BACKLOG:
            await self._drained.wait()

    def _control(self, message: browser_messages.BrowserMessage) -> None:
        if isinstance(message, Pause):
            self._flowing.clear()
        elif isinstance(message, Resume):
            self._flowing.set()
        elif isinstance(message, SizeChanged):
            self._size = (message.rows, message.cols)
            if self._link is not None and not self._read_only:
                self._link.resize(message.rows, message.cols)
                self._flush(self._link)


ForPage = bytes | dict[str, object] | PaneEnded | PaneInterrupted


def _messages(events: list[PaneEvent], read_only: bool) -> list[ForPage]:
    """The page's messages for muxd's events, runs of output joined into one."""
    messages: list[ForPage] = []
    for event in events:
        if isinstance(event, PaneOutput):
            if event.repaint:
                messages.append({"type": "repaint"})
            elif messages and isinstance(last := messages[-1], bytes):
                messages[-1] = last + event.data
                continue
            messages.append(event.data)
        elif isinstance(event, PaneAttached):
            messages.append({"type": "attached", "pane": event.pane, "read_only": read_only})
        else:
            messages.append(event)
    return messages
