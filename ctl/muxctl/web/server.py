"""The web server of `muxctl web` (aiohttp): the login, the overview page and its data,
every request through the guard (muxctl.web.guard). D-Bus is asked from one worker
thread (muxctl's client blocks), so a slow answer never holds the server."""

import asyncio
import concurrent.futures
import json
from collections.abc import Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from muxctl.errors import CtlError
from muxctl.web import browser_messages
from muxctl.web.browser_messages import BadMessage
from muxctl.web.guard import COOKIE, SECURITY_HEADERS, XTERM_CSP, Guard

if TYPE_CHECKING:
    from muxctl.client import MuxClient

PanesReader = Callable[[], Awaitable[list[dict[str, Any]]]]
GUARD = web.AppKey("guard", Guard)
PANES: web.AppKey[PanesReader] = web.AppKey("panes")
ATTACH_SOCKET = web.AppKey("attach_socket", Path)
MAX_MESSAGE = 1 << 16  # from a page: keys, a paste, a size (a bigger paste comes in parts)
HEARTBEAT_SECONDS = 20.0  # a page gone without closing (a frozen tab) is let go
STATIC = resources.files("muxctl.web") / "static"
PAGES = {"overview": "overview.html", "pane": "pane.html"}
FILES = {
    "overview.js": "text/javascript",
    "pane.js": "text/javascript",
    "web.css": "text/css",
    "vendor/xterm.mjs": "text/javascript",
    "vendor/addon-fit.mjs": "text/javascript",
    "vendor/xterm.css": "text/css",
}
PANE_ID = r"{pane:[1-9][0-9]{0,18}}"
DEFAULT_SIZE = (24, 80)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def guarded(request: web.Request, handler: Handler) -> web.StreamResponse:
    guard = request.app[GUARD]
    refused = guard.refusal(
        request.method, request.path, request.headers, request.cookies.get(COOKIE)
    )
    if refused is not None:
        status, reason = refused
        response: web.StreamResponse = web.Response(status=status, text=reason + "\n")
    else:
        response = await handler(request)
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)  # (the pane page widens its CSP)
    return response


async def log_in(request: web.Request) -> web.StreamResponse:
    """The link's token for a session cookie, then the overview (the token leaves the
    address bar and the history with the redirect)."""
    if _prefetch(request):  # (a browser fetching ahead must not spend the one-time link)
        return web.Response(status=503, text="a login link is not for prefetching\n")
    session = request.app[GUARD].log_in(request.query.get("token", ""))
    if session is None:
        return web.Response(status=403, text="this login link was used already, or is void\n")
    response = web.Response(status=303, headers={"Location": "/"})
    response.set_cookie(COOKIE, session, httponly=True, samesite="Strict", path="/")
    return response


def _prefetch(request: web.Request) -> bool:
    purpose = request.headers.get("Sec-Purpose", "") + request.headers.get("Purpose", "")
    return "prefetch" in purpose.lower() or "prerender" in purpose.lower()


async def overview_page(request: web.Request) -> web.StreamResponse:
    html = (STATIC / PAGES["overview"]).read_text()
    return web.Response(text=html, content_type="text/html")


async def pane_page(request: web.Request) -> web.StreamResponse:
    html = (STATIC / PAGES["pane"]).read_text()
    response = web.Response(text=html, content_type="text/html")
    response.headers["Content-Security-Policy"] = XTERM_CSP
    return response


async def static_file(request: web.Request) -> web.StreamResponse:
    name = request.match_info["name"]
    if name not in FILES:
        raise web.HTTPNotFound()
    try:
        text = (STATIC / name).read_text()
    except FileNotFoundError:  # (vendor/: a build without npm's files; docs/web.md says)
        return web.Response(status=503, text=f"this mux was built without {name}\n")
    return web.Response(text=text, content_type=FILES[name])


async def pane_socket(request: web.Request) -> web.StreamResponse:
    """The pane page's WebSocket (muxctl.web.pane_bridge); the page's size and whether
    it only watches in the query."""
    from muxctl.web.pane_bridge import PaneBridge

    pane = int(request.match_info["pane"])
    size = _size(request.query.get("rows"), request.query.get("cols"))
    read_only = request.query.get("read_only") == "1"
    socket = web.WebSocketResponse(max_msg_size=MAX_MESSAGE, heartbeat=HEARTBEAT_SECONDS)
    await socket.prepare(request)
    await PaneBridge(socket, request.app[ATTACH_SOCKET], pane, size, read_only=read_only).run()
    return socket


def _size(rows: str | None, cols: str | None) -> tuple[int, int]:
    """The page's size from the query (it sends its own once its terminal is drawn)."""
    try:
        given = browser_messages.size(int(rows or ""), int(cols or ""))
    except (ValueError, BadMessage):
        return DEFAULT_SIZE
    return given.rows, given.cols


async def panes(request: web.Request) -> web.StreamResponse:
    try:
        listed = await request.app[PANES]()
    except CtlError as e:  # (muxd gone, or upgrading: the page says so, and asks again)
        return web.json_response({"error": str(e)}, status=503)
    return web.Response(text=json.dumps({"panes": listed}), content_type="application/json")


def make_app(
    guard: Guard, client_factory: Callable[[], "MuxClient"], attach_socket: Path
) -> web.Application:
    """The application; `client_factory` makes the D-Bus client, in the worker thread;
    pane pages attach through `attach_socket`."""
    from muxctl.web.panes_source import overview

    worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="dbus")
    clients: list[MuxClient] = []

    def read() -> list[dict[str, Any]]:
        if not clients:
            clients.append(client_factory())
        try:
            return overview(clients[0])
        except CtlError:
            clients.pop().close()  # (a new connection next time: muxd may be back)
            raise

    async def read_panes() -> list[dict[str, Any]]:
        return await asyncio.get_running_loop().run_in_executor(worker, read)

    async def stop_worker(app: web.Application) -> None:
        worker.shutdown(wait=True, cancel_futures=True)
        for client in clients:
            client.close()

    app = web.Application(middlewares=[guarded])
    app[GUARD] = guard
    app[PANES] = read_panes
    app[ATTACH_SOCKET] = attach_socket
    app.router.add_get("/login", log_in)
    app.router.add_get("/", overview_page)
    app.router.add_get(f"/pane/{PANE_ID}", pane_page)
    app.router.add_get("/static/{name:(vendor/)?[a-z.-]+}", static_file)
    app.router.add_get("/api/panes", panes)
    app.router.add_get(f"/ws/pane/{PANE_ID}", pane_socket)
    app.on_cleanup.append(stop_worker)
    return app
