"""Who may use `muxctl web` (muxctl.web.guard, muxctl.web.server): the login link
once, a session cookie after it, the server's own Host and Origin only; each refusal
over real HTTP to the real application (aiohttp's test server), D-Bus stood in for."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import WSMsgType, WSServerHandshakeError
from aiohttp.test_utils import TestClient, TestServer

from muxctl.web import guard as guard_module
from muxctl.web.guard import COOKIE, Guard
from muxctl.web.listening import plan
from muxctl.web.server import make_app

PANES = [
    {
        "id": 1,
        "window": 1,
        "title": "<script>alert(1)</script>",
        "program": "bash",
        "cwd": "/home/someone",
        "state": "running",
        "screen": ["$ echo hi", "hi"],
    }
]


class StandInClient:
    """What the server asks of muxctl's D-Bus client, for panes_source.overview."""

    closed = False

    def call(
        self, member: str, body: list[Any] | None = None, path: str | None = None
    ) -> list[Any]:
        class V:
            def __init__(self, value: Any) -> None:
                self.value = value

        if member == "ListPanes":
            pane = PANES[0]
            return [
                [
                    {"id": V(1), "window": V(1), "title": V(pane["title"]), "argv": V(["bash"])}
                    | {"cwd": V(pane["cwd"]), "state": V("running"), "exit_status": V(0)}
                ]
            ]
        return [["$ echo hi", "hi"]]

    def close(self) -> None:
        self.closed = True


if TYPE_CHECKING:  # (TestClient is generic only to type checkers before aiohttp 3.11)
    Scenario = Callable[[TestClient[Any, Any], Guard, str], Awaitable[None]]


def run(scenario: Scenario) -> None:
    async def main() -> None:
        guard = Guard(frozenset())
        server = TestServer(make_app(guard, StandInClient, Path("/nonexistent")), host="127.0.0.1")  # type: ignore[arg-type]
        async with TestClient(server) as client:
            host = f"127.0.0.1:{server.port}"
            guard.serve_hosts(plan(None, None, None, None, None).hosts(server.port or 0))
            await scenario(client, guard, host)

    asyncio.run(main())


async def _logged_in(client: TestClient[Any, Any], guard: Guard) -> str:
    answer = await client.get(f"/login?token={guard.token}", allow_redirects=False)
    assert answer.status == 303 and answer.headers["Location"] == "/"
    cookie = answer.cookies[COOKIE]
    assert cookie["httponly"] and cookie["samesite"] == "Strict" and cookie["path"] == "/"
    return cookie.value


def test_the_login_link_once_then_the_cookie_opens_every_page() -> None:
    async def scenario(client: TestClient[Any, Any], guard: Guard, host: str) -> None:
        spent = guard.token
        session = await _logged_in(client, guard)
        again = await client.get(f"/login?token={spent}", allow_redirects=False)
        assert again.status == 403, "the link is spent"
        assert guard.token != spent, "a new link for the next login (muxctl web --login)"
        page = await client.get("/", cookies={COOKIE: session})
        assert page.status == 200 and "overview.js" in await page.text()
        csp = page.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert page.headers["X-Content-Type-Options"] == "nosniff"
        panes = await (await client.get("/api/panes", cookies={COOKIE: session})).json()
        assert panes["panes"][0]["title"] == "<script>alert(1)</script>"  # (shown as text)
        assert panes["panes"][0]["screen"] == ["$ echo hi", "hi"]

    run(scenario)


def test_a_prefetch_does_not_spend_the_login_link() -> None:
    async def scenario(client: TestClient[Any, Any], guard: Guard, host: str) -> None:
        for purpose in ({"Sec-Purpose": "prefetch"}, {"Sec-Purpose": "prefetch;prerender"}):
            answer = await client.get(f"/login?token={guard.token}", headers=purpose)
            assert answer.status == 503
        await _logged_in(client, guard)  # (still good)

    run(scenario)


@pytest.mark.parametrize(
    "path", ["/", "/api/panes", "/static/overview.js", "/static/vendor/xterm.mjs", "/pane/1"]
)
def test_no_cookie_or_a_made_up_one_is_refused(path: str) -> None:
    async def scenario(client: TestClient[Any, Any], guard: Guard, host: str) -> None:
        assert (await client.get(path)).status == 401
        assert (await client.get(path, cookies={COOKIE: "made-up"})).status == 401

    run(scenario)


def test_another_host_name_is_refused_even_with_the_cookie() -> None:
    """A page of a DNS-rebinding attacker's name reaches 127.0.0.1 with its own Host."""

    async def scenario(client: TestClient[Any, Any], guard: Guard, host: str) -> None:
        session = await _logged_in(client, guard)
        for name in ("evil.example:" + host.split(":")[1], "127.0.0.1:1", ""):
            answer = await client.get("/", cookies={COOKIE: session}, headers={"Host": name})
            assert answer.status == 421, name
        answer = await client.get(f"/login?token={guard.token}", headers={"Host": "evil.example"})
        assert answer.status == 421
        own = await client.get("/", cookies={COOKIE: session}, headers={"Host": host})
        assert own.status == 200

    run(scenario)


def test_another_origin_is_refused() -> None:
    """A page on another port of 127.0.0.1 is same-site: the browser sends it the Strict
    cookie; only the Origin tells it apart."""

    async def scenario(client: TestClient[Any, Any], guard: Guard, host: str) -> None:
        session = await _logged_in(client, guard)
        other = {"Origin": "http://127.0.0.1:1"}
        answer = await client.get("/api/panes", cookies={COOKIE: session}, headers=other)
        assert answer.status == 403
        post = await client.post("/api/panes", cookies={COOKIE: session})
        assert post.status == 403, "a change without an Origin is refused"
        own = {"Origin": f"http://{host}"}
        assert (
            await client.get("/api/panes", cookies={COOKIE: session}, headers=own)
        ).status == 200

    run(scenario)


def test_a_login_link_or_a_session_too_old_is_void(monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario(client: TestClient[Any, Any], guard: Guard, host: str) -> None:
        now = guard_module.time.monotonic()
        monkeypatch.setattr(
            guard_module.time, "monotonic", lambda: now + guard_module.TOKEN_SECONDS + 1
        )
        answer = await client.get(f"/login?token={guard.token}", allow_redirects=False)
        assert answer.status == 403

    run(scenario)

    async def session_ages(client: TestClient[Any, Any], guard: Guard, host: str) -> None:
        session = await _logged_in(client, guard)
        now = guard_module.time.monotonic()
        monkeypatch.setattr(
            guard_module.time, "monotonic", lambda: now + guard_module.SESSION_SECONDS + 1
        )
        assert (await client.get("/", cookies={COOKIE: session})).status == 401

    monkeypatch.undo()
    run(session_ages)


def test_the_hosts_of_a_loopback_server() -> None:
    loopback = {"127.0.0.1:8080", "localhost:8080", "[::1]:8080"}
    assert plan("127.0.0.1:0", None, None, None, None).hosts(8080) == loopback
    assert plan("[::1]:80", None, None, None, None).hosts(80) == {
        "127.0.0.1:80",
        "localhost:80",
        "[::1]:80",
    }


def test_the_pane_socket_takes_only_the_servers_own_pages() -> None:
    """A WebSocket upgrade must carry the cookie and the server's own Origin (browsers
    always send one with it; a page elsewhere sends its own)."""

    async def scenario(client: TestClient[Any, Any], guard: Guard, host: str) -> None:
        session = await _logged_in(client, guard)
        client.session.cookie_jar.clear()  # (each request says its own)
        cookie = {"Cookie": f"{COOKIE}={session}"}
        for headers, status in [
            ({"Origin": f"http://{host}"}, 401),
            ({"Origin": "http://127.0.0.1:1"} | cookie, 403),
            (cookie, 403),
        ]:
            with pytest.raises(WSServerHandshakeError) as refused:
                await client.ws_connect("/ws/pane/1", headers=headers)
            assert refused.value.status == status, headers
        socket = await client.ws_connect(
            "/ws/pane/1", headers={"Origin": f"http://{host}"} | cookie
        )
        said = await socket.receive_json()  # (no muxd behind this server)
        assert said == {
            "type": "ended",
            "why": "mux is not running (nothing listens on its attach socket)",
        }
        assert (await socket.receive()).type == WSMsgType.CLOSE

    run(scenario)


def test_the_pane_page_lets_xterm_style_itself_but_runs_only_the_servers_scripts() -> None:
    async def scenario(client: TestClient[Any, Any], guard: Guard, host: str) -> None:
        session = await _logged_in(client, guard)
        page = await client.get("/pane/7", cookies={COOKIE: session})
        assert page.status == 200 and "pane.js" in await page.text()
        csp = page.headers["Content-Security-Policy"]
        assert "script-src 'self';" in csp and "style-src 'self' 'unsafe-inline'" in csp
        for path in ("/pane/0", "/pane/x", "/pane/1/2", "/static/../guard.py", "/static/pane.html"):
            assert (await client.get(path, cookies={COOKIE: session})).status == 404, path
        script = await client.get("/static/vendor/xterm.mjs", cookies={COOKIE: session})
        assert script.status == 200 and script.content_type == "text/javascript"

    run(scenario)


def test_a_change_must_be_json_from_the_servers_own_page() -> None:
    """A form of another site can POST without asking the browser first, but not as
    application/json; and its Origin is its own."""

    async def scenario(client: TestClient[Any, Any], guard: Guard, host: str) -> None:
        session = await _logged_in(client, guard)
        client.session.cookie_jar.clear()
        own = {"Cookie": f"{COOKIE}={session}", "Origin": f"http://{host}"}
        path = "/api/snapshots/3/restore"
        form = await client.post(path, headers=own, data={"panes": "1"})
        assert form.status == 415
        foreign = own | {"Origin": "http://127.0.0.1:1", "Content-Type": "application/json"}
        assert (await client.post(path, headers=foreign, data="{}")).status == 403
        json_type = own | {"Content-Type": "application/json"}
        for body in ("not json", '{"panes": []}', '{"panes": [true]}', '{"panes": [0]}', "[1]"):
            answer = await client.post(path, headers=json_type, data=body)
            assert answer.status == 400, body
        huge = await client.post(path, headers=json_type, data="[" * 100_000)
        assert huge.status == 413, "a body past 64 KiB is refused whole"

    run(scenario)
