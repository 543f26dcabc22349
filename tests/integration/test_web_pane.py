"""The pane page of `muxctl web` in a real browser: a pane attached through xterm.js
over the page's WebSocket (docs/web.md#the-pane-page). Screenshots go to the test's
directory."""

from __future__ import annotations

import asyncio
import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import pytest
from playwright.sync_api import Page, expect

from tests.harness import Service, wait_for
from tests.web_browser import browser_page, web

__all__ = ["web"]  # (a fixture)

BASH = ["bash", "--norc", "--noprofile", "-i"]


def _open_pane(page: Page, link: str, pane: int) -> None:
    page.goto(link)
    page.goto(page.url.rstrip("/") + f"/pane/{pane}")
    expect(page.locator("#state")).to_have_text("attached")


def _rows(page: Page) -> str:
    return page.locator(".xterm-rows").inner_text()


def test_type_into_a_pane_and_see_it_resize_with_the_window(
    service: Service, web: str, tmp_path: Path
) -> None:
    pane = service.spawn(BASH, env={"PS1": "web$ "})
    service.call("SendInput", "tay", [pane, b"echo before-$((2*3))\n"])
    service.wait_screen(pane, "before-6")
    with browser_page(900, 600) as (page, errors):
        _open_pane(page, web, pane)
        expect(page.locator(".xterm-rows")).to_contain_text("before-6")  # the repaint
        page.keyboard.type("echo typed-$((6*7))\n")
        expect(page.locator(".xterm-rows")).to_contain_text("typed-42")
        service.wait_screen(pane, "typed-42")
        page.keyboard.type("sleep 600\n")
        service.wait_screen(pane, "sleep 600")
        page.keyboard.press("Control+c")  # Ctrl reaches the program as ^C
        page.keyboard.type("echo after-$((1+1))\n")
        expect(page.locator(".xterm-rows")).to_contain_text("after-2")
        page.keyboard.type("echo alt-one two")
        page.keyboard.press("Alt+b")  # Alt as Meta: readline's backward-word
        page.keyboard.type("X\n")
        expect(page.locator(".xterm-rows")).to_contain_text("alt-one Xtwo")
        # A paste (the browser's: a paste event with the text), bracketed for bash.
        page.evaluate(
            """() => {
                const data = new DataTransfer();
                data.setData("text/plain", "echo pasted-$((2*2))");
                const target = document.querySelector(".xterm-helper-textarea");
                const paste = {clipboardData: data, bubbles: true};
                target.dispatchEvent(new ClipboardEvent("paste", paste));
            }"""
        )
        page.keyboard.press("Enter")
        expect(page.locator(".xterm-rows")).to_contain_text("pasted-4")
        big = service.panes()[pane]
        page.set_viewport_size({"width": 600, "height": 400})
        wait_for(
            lambda: (
                (service.panes()[pane]["cols"], service.panes()[pane]["rows"])
                < (big["cols"], big["rows"])
            ),
            what="the pane smaller with the window",
        )
        page.keyboard.type("stty size\n")
        now = service.panes()[pane]
        expect(page.locator(".xterm-rows")).to_contain_text(f"{now['rows']} {now['cols']}")
        page.screenshot(path=tmp_path / "pane.png")
    assert errors == [], "the page logged errors (a refused script or style would be one)"


def test_read_only_watches_and_types_nothing(service: Service, web: str) -> None:
    pane = service.spawn(BASH, env={"PS1": "web$ "})
    service.wait_screen(pane, "web$")
    with browser_page(900, 600) as (page, errors):
        _open_pane(page, web, pane)
        size = (service.panes()[pane]["rows"], service.panes()[pane]["cols"])
        page.check("#read-only")
        expect(page.locator("#state")).to_have_text("watching (read-only)")
        page.locator(".xterm").click()
        page.keyboard.type("echo typed-while-watching\n")
        service.call("SendInput", "tay", [pane, b"echo from-elsewhere-$((3*3))\n"])
        expect(page.locator(".xterm-rows")).to_contain_text("from-elsewhere-9")
        assert "typed-while-watching" not in service.wait_screen(pane, "from-elsewhere-9")
        page.set_viewport_size({"width": 500, "height": 300})
        page.uncheck("#read-only")  # (attached again: the size is the page's from now)
        expect(page.locator("#state")).to_have_text("attached")
        wait_for(
            lambda: (service.panes()[pane]["rows"], service.panes()[pane]["cols"]) < size,
            what="the page's size taken once it types again",
        )
    assert errors == []


def test_the_page_says_when_the_pane_exits_and_rides_out_an_upgrade(
    service: Service, web: str
) -> None:
    pane = service.spawn(BASH, env={"PS1": "web$ "})
    service.wait_screen(pane, "web$")
    with browser_page(900, 600) as (page, errors):
        _open_pane(page, web, pane)
        service.muxctl("upgrade", check=True)
        page.keyboard.type("echo after-upgrade-$((5*5))\n")  # (typed once attached again)
        expect(page.locator(".xterm-rows")).to_contain_text("after-upgrade-25")
        page.keyboard.type("exit 3\n")
        expect(page.locator("#state")).to_have_text(re.compile("exited with status 3"))
    assert errors == []


def test_a_pane_that_is_not_there(service: Service, web: str) -> None:
    with browser_page(900, 600) as (page, _):
        page.goto(web)
        page.goto(page.url.rstrip("/") + "/pane/999999")
        expect(page.locator("#state")).to_contain_text("999999")


def test_a_page_that_says_what_no_page_of_ours_says_is_let_go(service: Service, web: str) -> None:
    """Garbage on the socket closes that socket (1008, with the reason), nothing else:
    the pane runs on and another page attaches."""
    pane = service.spawn(BASH, env={"PS1": "web$ "})
    service.wait_screen(pane, "web$")
    parts = urlsplit(web)
    origin = f"http://{parts.netloc}"

    async def talk() -> tuple[int | None, str]:
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
            async with session.get(web, allow_redirects=False) as login:
                assert login.status == 303
            socket = await session.ws_connect(f"{origin}/ws/pane/{pane}", origin=origin)
            await socket.send_str('{"type": "resize", "rows": 99999, "cols": 1}')
            while (message := await socket.receive()).type != aiohttp.WSMsgType.CLOSE:
                pass
            return socket.close_code, message.extra or ""

    code, reason = asyncio.run(talk())
    assert code == 1008 and "rows" in reason
    assert service.panes()[pane]["state"] == "running"


def test_the_page_comes_back_after_its_connection_is_cut(service: Service, web: str) -> None:
    """A blip: the page's connections cut under it (ss -K, as a network failure or a
    proxy restart would): it connects again, muxd repaints, and what is typed
    meanwhile arrives."""
    pane = service.spawn(BASH, env={"PS1": "web$ "})
    service.call("SendInput", "tay", [pane, b"echo before-blip\n"])
    service.wait_screen(pane, "before-blip")
    port = str(urlsplit(web).port)
    with browser_page(900, 600) as (page, errors):
        _open_pane(page, web, pane)
        cut = subprocess.run(
            ["ss", "-K", "state", "established", "(", "sport", "=", f":{port}", ")"],
            capture_output=True,
            text=True,
            check=False,
        )
        if cut.returncode != 0 or f":{port}" not in cut.stdout:
            pytest.fail(f"ss -K cut nothing here: {cut.stdout} {cut.stderr}")
        page.keyboard.type("echo typed-meanwhile-$((3*4))\n")
        expect(page.locator(".xterm-rows")).to_contain_text("typed-meanwhile-12")
        expect(page.locator("#state")).to_have_text("attached")
        expect(page.locator(".xterm-rows")).to_contain_text("before-blip")  # repainted
    assert errors == []
