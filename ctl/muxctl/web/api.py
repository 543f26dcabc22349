"""The web view's JSON API (docs/web.md#the-api): the panes, windows, hosts, the history
of snapshots, a restore, starting a held pane. Every answer is JSON; muxd's refusal is 400 with its
message, muxd away 503. A change is a POST of JSON (`Content-Type: application/json`,
which a form of another site cannot send without the browser asking first), from the
server's own pages (the guard checks its Origin)."""

import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from muxctl.errors import CtlError, RemoteError
from muxctl.web import snapshots_source, windows_source
from muxctl.web.dbus_worker import DbusWorker
from muxctl.web.panes_source import overview

WORKER = web.AppKey("dbus_worker", DbusWorker)
MAX_BODY = 1 << 16  # a list of pane ids
MAX_PANES = 10_000


async def _answer(request: web.Request, question: Callable[[Any], Any]) -> web.StreamResponse:
    try:
        answer = await request.app[WORKER].ask(question)
    except RemoteError as e:  # (muxd refused: an unknown generation, a pane not held...)
        return web.json_response({"error": str(e)}, status=400)
    except CtlError as e:  # (muxd away, or upgrading: the page says so)
        return web.json_response({"error": str(e)}, status=503)
    return web.Response(text=json.dumps(answer), content_type="application/json")


async def panes(request: web.Request) -> web.StreamResponse:
    return await _answer(request, lambda client: {"panes": overview(client)})


async def windows(request: web.Request) -> web.StreamResponse:
    return await _answer(request, lambda c: {"windows": windows_source.windows(c)})


async def hosts(request: web.Request) -> web.StreamResponse:
    return await _answer(request, lambda c: {"hosts": windows_source.hosts(c)})


async def snapshots(request: web.Request) -> web.StreamResponse:
    return await _answer(request, lambda c: {"snapshots": snapshots_source.snapshots(c)})


async def snapshot(request: web.Request) -> web.StreamResponse:
    generation = int(request.match_info["generation"])
    return await _answer(request, lambda c: {"panes": snapshots_source.dry_run(c, generation)})


async def restore(request: web.Request) -> web.StreamResponse:
    generation = int(request.match_info["generation"])
    body = await _json_body(request)
    chosen = body.get("panes") if isinstance(body, dict) else None
    if not (
        isinstance(chosen, list)
        and 0 < len(chosen) <= MAX_PANES
        and all(isinstance(p, int) and not isinstance(p, bool) and p > 0 for p in chosen)
    ):
        raise web.HTTPBadRequest(text='give the panes to restore: {"panes": [ID, ...]}\n')
    return await _answer(
        request, lambda c: {"started": snapshots_source.restore(c, generation, chosen)}
    )


async def start(request: web.Request) -> web.StreamResponse:
    pane = int(request.match_info["pane"])
    await _json_body(request)

    def started(client: Any) -> dict[str, int]:
        snapshots_source.start(client, pane)
        return {"started": pane}

    return await _answer(request, started)


async def _json_body(request: web.Request) -> Any:
    if request.content_type != "application/json":
        raise web.HTTPUnsupportedMediaType(text="a change is sent as application/json\n")
    try:
        return json.loads(await request.text() or "{}")
    except (ValueError, RecursionError):
        raise web.HTTPBadRequest(text="the body is not JSON\n") from None


Route = tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]]


def routes(pane_id: str) -> list[Route]:
    generation = r"{generation:[0-9]{1,19}}"
    return [
        ("GET", "/api/panes", panes),
        ("GET", "/api/windows", windows),
        ("GET", "/api/hosts", hosts),
        ("GET", "/api/snapshots", snapshots),
        ("GET", f"/api/snapshots/{generation}", snapshot),
        ("POST", f"/api/snapshots/{generation}/restore", restore),
        ("POST", f"/api/panes/{pane_id}/start", start),
    ]
