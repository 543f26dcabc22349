"""The web server of `muxctl web` (aiohttp): the login, the overview page and its data,
every request through the guard (muxctl.web.guard). D-Bus is asked from one worker
thread (muxctl's client blocks), so a slow answer never holds the server."""

import asyncio
import concurrent.futures
import json
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import TYPE_CHECKING, Any

from aiohttp import web

from muxctl.errors import CtlError
from muxctl.web.guard import COOKIE, SECURITY_HEADERS, Guard

if TYPE_CHECKING:
    from muxctl.client import MuxClient

PanesReader = Callable[[], Awaitable[list[dict[str, Any]]]]
GUARD = web.AppKey("guard", Guard)
PANES: web.AppKey[PanesReader] = web.AppKey("panes")
STATIC = resources.files("muxctl.web") / "static"
PAGES = {"/": "overview.html"}
FILES = {"overview.js": "text/javascript", "web.css": "text/css"}

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
    response.headers.update(SECURITY_HEADERS)
    return response


async def log_in(request: web.Request) -> web.StreamResponse:
    """The link's token for a session cookie, then the overview (the token leaves the
    address bar and the history with the redirect)."""
    session = request.app[GUARD].log_in(request.query.get("token", ""))
    if session is None:
        return web.Response(status=403, text="this login link was used already, or is void\n")
    response = web.Response(status=303, headers={"Location": "/"})
    response.set_cookie(COOKIE, session, httponly=True, samesite="Strict", path="/")
    return response


async def page(request: web.Request) -> web.StreamResponse:
    html = (STATIC / PAGES[request.path]).read_text()
    return web.Response(text=html, content_type="text/html")


async def static_file(request: web.Request) -> web.StreamResponse:
    name = request.match_info["name"]
    if name not in FILES:
        raise web.HTTPNotFound()
    return web.Response(text=(STATIC / name).read_text(), content_type=FILES[name])


async def panes(request: web.Request) -> web.StreamResponse:
    try:
        listed = await request.app[PANES]()
    except CtlError as e:  # (muxd gone, or upgrading: the page says so, and asks again)
        return web.json_response({"error": str(e)}, status=503)
    return web.Response(text=json.dumps({"panes": listed}), content_type="application/json")


def make_app(guard: Guard, client_factory: Callable[[], "MuxClient"]) -> web.Application:
    """The application; `client_factory` makes the D-Bus client, in the worker thread."""
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
    app.router.add_get("/login", log_in)
    app.router.add_get("/", page)
    app.router.add_get("/static/{name}", static_file)
    app.router.add_get("/api/panes", panes)
    app.on_cleanup.append(stop_worker)
    return app
