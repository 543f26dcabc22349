"""The web server of `muxctl web` (aiohttp): the login, the overview page and its data,
every request through the guard (muxctl.web.guard). D-Bus is asked from one worker
thread (muxctl's client blocks), so a slow answer never holds the server."""

import os
import socket
from collections.abc import Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from mux.system.peercred import PeerUnknown, peer_credentials
from muxctl.web import api
from muxctl.web.dbus_worker import DbusWorker
from muxctl.web.guard import COOKIE, SECURITY_HEADERS, XTERM_CSP, Guard
from muxctl.web.sockets import overview_socket, pane_socket

if TYPE_CHECKING:
    from muxctl.client import MuxClient

GUARD = web.AppKey("guard", Guard)
STATIC = resources.files("muxctl.web") / "static"
PAGES = {
    "/": "overview.html",
    "/snapshots": "snapshots.html",
    "/windows": "windows.html",
    "/hosts": "hosts.html",
}
FILES = {
    "overview.js": "text/javascript",
    "pane.js": "text/javascript",
    "snapshots.js": "text/javascript",
    "screen.js": "text/javascript",
    "live.js": "text/javascript",
    "api.js": "text/javascript",
    "windows.js": "text/javascript",
    "hosts.js": "text/javascript",
    "web.css": "text/css",
    "vendor/xterm.mjs": "text/javascript",
    "vendor/addon-fit.mjs": "text/javascript",
    "vendor/xterm.css": "text/css",
}
PANE_ID = r"{pane:[1-9][0-9]{0,18}}"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def guarded(request: web.Request, handler: Handler) -> web.StreamResponse:
    guard = request.app[GUARD]
    refused = guard.refusal(
        request.method, request.path, request.headers, request.cookies.get(COOKIE)
    )
    if not _own_user(request):
        refused = 403, "this server serves its own user only"
    if refused is not None:
        status, reason = refused
        response: web.StreamResponse = web.Response(status=status, text=reason + "\n")
    else:
        response = await handler(request)
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)  # (the pane page widens its CSP)
    return response


def _own_user(request: web.Request) -> bool:
    """On a Unix socket (--socket), whether the peer runs as this user (SO_PEERCRED; not
    knowing is no); over TCP, always (the session says who may come)."""
    sock = request.transport.get_extra_info("socket") if request.transport else None
    if sock is None or sock.family != socket.AF_UNIX:
        return True
    try:
        return bool(peer_credentials(sock).uid == os.getuid())
    except PeerUnknown:
        return False


async def log_in(request: web.Request) -> web.StreamResponse:
    """The link's token for a session cookie, then the overview (the token leaves the
    address bar and the history with the redirect)."""
    if _prefetch(request):  # (a browser fetching ahead must not spend the one-time link)
        return web.Response(status=503, text="a login link is not for prefetching\n")
    session = request.app[GUARD].log_in(request.query.get("token", ""))
    if session is None:
        return web.Response(status=403, text="this login link was used already, or is void\n")
    response = web.Response(status=303, headers={"Location": "/"})
    secure = request.app[GUARD].secure
    response.set_cookie(COOKIE, session, httponly=True, samesite="Strict", path="/", secure=secure)
    return response


def _prefetch(request: web.Request) -> bool:
    purpose = request.headers.get("Sec-Purpose", "") + request.headers.get("Purpose", "")
    return "prefetch" in purpose.lower() or "prerender" in purpose.lower()


async def page(request: web.Request) -> web.StreamResponse:
    html = (STATIC / PAGES[request.path]).read_text()
    return web.Response(text=html, content_type="text/html")


async def pane_page(request: web.Request) -> web.StreamResponse:
    html = (STATIC / "pane.html").read_text()
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


def make_app(
    guard: Guard, client_factory: Callable[[], "MuxClient"], attach_socket: Path
) -> web.Application:
    """The application; `client_factory` makes a D-Bus client (in a worker thread);
    pages attach through `attach_socket`."""
    from muxctl.web.overview_feed import OverviewFeed
    from muxctl.web.panes_source import overview_lists
    from muxctl.web.signal_watch import SignalWatch

    worker = DbusWorker(client_factory)

    def signals(notify: Callable[[], None]) -> SignalWatch:
        watch = SignalWatch(client_factory, notify)
        watch.start()
        return watch

    feed = OverviewFeed(lambda: worker.ask(overview_lists), attach_socket, signals)

    async def stop(app: web.Application) -> None:
        await feed.stop()
        worker.close()

    async def pane_page_socket(request: web.Request) -> web.StreamResponse:
        return await pane_socket(request, attach_socket)

    async def overview_page_socket(request: web.Request) -> web.StreamResponse:
        return await overview_socket(request, feed)

    app = web.Application(middlewares=[guarded], client_max_size=api.MAX_BODY)
    app[GUARD] = guard
    app[api.WORKER] = worker
    app.router.add_get("/login", log_in)
    for path in PAGES:
        app.router.add_get(path, page)
    app.router.add_get(f"/pane/{PANE_ID}", pane_page)
    app.router.add_get("/static/{name:(vendor/)?[a-z.-]+}", static_file)
    for method, path, handler in api.routes(PANE_ID):
        app.router.add_route(method, path, handler)
    app.router.add_get(f"/ws/pane/{PANE_ID}", pane_page_socket)
    app.router.add_get("/ws/overview", overview_page_socket)
    app.on_cleanup.append(stop)
    return app
