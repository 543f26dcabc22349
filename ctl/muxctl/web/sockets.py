"""The web server's two WebSockets: a pane page's (muxctl.web.pane_bridge) and an
overview page's (muxctl.web.overview_feed)."""

import asyncio
import json
from pathlib import Path

from aiohttp import web

from muxctl.web import browser_messages
from muxctl.web.browser_messages import BadMessage
from muxctl.web.overview_feed import OverviewFeed

MAX_MESSAGE = 1 << 16  # from a page: keys, a paste, a size (a bigger paste comes in parts)
HEARTBEAT_SECONDS = 20.0  # a page gone without closing (a frozen tab) is let go
DEFAULT_SIZE = (24, 80)


async def pane_socket(request: web.Request, attach_socket: Path) -> web.WebSocketResponse:
    """The pane page's, the page's size and whether it only watches in the query."""
    from muxctl.web.pane_bridge import PaneBridge

    pane = int(request.match_info["pane"])
    size = _size(request.query.get("rows"), request.query.get("cols"))
    read_only = request.query.get("read_only") == "1"
    socket = web.WebSocketResponse(max_msg_size=MAX_MESSAGE, heartbeat=HEARTBEAT_SECONDS)
    await socket.prepare(request)
    await PaneBridge(socket, attach_socket, pane, size, read_only=read_only).run()
    return socket


def _size(rows: str | None, cols: str | None) -> tuple[int, int]:
    """The page's size from the query (it sends its own once its terminal is drawn)."""
    try:
        given = browser_messages.size(int(rows or ""), int(cols or ""))
    except (ValueError, BadMessage):
        return DEFAULT_SIZE
    return given.rows, given.cols


async def overview_socket(request: web.Request, feed: OverviewFeed) -> web.WebSocketResponse:
    """The overview page's: JSON updates (the list, the screens that changed) as the
    feed has them; the page says nothing (what it sends is ignored)."""
    socket = web.WebSocketResponse(max_msg_size=MAX_MESSAGE, heartbeat=HEARTBEAT_SECONDS)
    await socket.prepare(request)
    page = feed.open_page()
    closed = asyncio.create_task(_until_closed(socket))
    try:
        while not closed.done():
            ready = asyncio.create_task(page.ready.wait())
            await asyncio.wait({ready, closed}, return_when=asyncio.FIRST_COMPLETED)
            ready.cancel()
            if closed.done():
                break
            await socket.send_str(json.dumps(page.take()))
    except ConnectionResetError:
        pass  # (the page went while being sent to)
    finally:
        closed.cancel()
        await feed.close_page(page)
    return socket


async def _until_closed(socket: web.WebSocketResponse) -> None:
    async for _ in socket:
        pass
