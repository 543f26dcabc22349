"""`muxctl web` as a person uses it: its own process, serving muxd's panes, in a real
browser (Debian's chromium, driven by Playwright) and to plain HTTP for the refusals
(docs/web.md). Screenshots go to the test's directory."""

from __future__ import annotations

import http.client
import os
import signal
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import expect

from tests.harness import Service, wait_for
from tests.web_browser import browser_page, web

__all__ = ["web"]  # (a fixture)


def _get(link: str, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    parts = urlsplit(link)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    connection.request("GET", path, headers=headers or {})
    return connection.getresponse()


def test_the_overview_shows_every_pane_and_its_screen_in_a_browser(
    service: Service, web: str, tmp_path: Path
) -> None:
    shell = service.spawn(["sh", "-c", "echo from-the-pane-$((6*7)); exec sleep 600"])
    service.call("SetTitle", "ts", [shell, "<b>not bold</b>"])
    other = service.spawn(["sh", "-c", "echo second-pane; exec sleep 600"])
    service.wait_screen(shell, "from-the-pane-42")
    service.wait_screen(other, "second-pane")
    with browser_page() as (page, errors):
        page.goto(web)
        assert urlsplit(page.url).path == "/" and "token" not in page.url
        card = page.locator(f'article.pane[data-pane="{shell}"]')
        expect(card.locator("pre")).to_contain_text("from-the-pane-42")
        expect(card.locator("header")).to_contain_text("<b>not bold</b>")  # as text
        assert card.locator("header b").count() == 0
        expect(page.locator("article.pane")).to_have_count(2)
        page.screenshot(path=tmp_path / "overview.png")
        # New output shows without a reload.
        service.call("SendInput", "tay", [other, b""])  # (nothing: it reads nothing)
        third = service.spawn(["sh", "-c", "echo third-pane; exec sleep 600"])
        expect(page.locator(f'article.pane[data-pane="{third}"] pre')).to_contain_text("third-pane")
        page.fill("#filter", "second-pane")
        expect(page.locator("article.pane")).to_have_count(1)
        cookie = next(c for c in page.context.cookies() if c["name"] == "mux_session")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert errors == [], "the page logged errors (a refused script or style would be one)"
    assert (tmp_path / "overview.png").stat().st_size > 0


def _clients(service: Service, pane: int) -> list[dict[str, object]]:
    (listed,) = service.call("ListClients", "t", [pane])
    return [{key: value.value for key, value in client.items()} for client in listed]


def test_the_overview_is_live_in_colour_and_watches_only_while_open(
    service: Service, web: str, tmp_path: Path
) -> None:
    """Screens change, panes exit and their titles change without a reload; colours
    come through; each running pane is watched by a glance (a read-only client that is
    no one looking) while a page is open, and by none once it is closed."""
    pane = service.spawn(["bash", "--norc", "--noprofile", "-i"], env={"PS1": "web$ "})
    service.wait_screen(pane, "web$")
    other = service.spawn(["sh", "-c", "exec sleep 600"])
    with browser_page() as (page, errors):
        page.goto(web)
        wait_for(lambda: len(_clients(service, other)) == 1, what="the other pane watched")
        card = page.locator(f'article.pane[data-pane="{pane}"]')
        expect(card.locator("pre")).to_contain_text("web$")
        wait_for(
            lambda: (
                [(c["read_only"], c["glance"]) for c in _clients(service, pane)] == [(True, True)]
            ),
            what="the overview's glance at the pane (read-only, no one looking)",
        )
        service.call("SendInput", "tay", [pane, b"printf '\\033[31mred-%s\\033[0m\\n' $((40+2))\n"])
        red = card.locator("pre span", has_text="red-42")
        expect(red).to_have_css("color", "rgb(205, 0, 0)")
        # A notification no one looking saw (the overview's glance is no one): shown on
        # the card until someone uses the pane.
        service.call("SendInput", "tay", [pane, b"printf '\\033]9;%s\\a' build-done\n"])
        expect(card.locator("p.notice")).to_have_text("🔔 build-done")
        assert service.panes()[pane]["notice"] == "build-done"
        service.call("GetScreen", "t", [pane])  # (a read: seen)
        expect(card.locator("p.notice")).to_be_hidden()
        service.call("SetTitle", "ts", [pane, "renamed-live"])
        expect(card.locator("header")).to_contain_text("renamed-live")
        service.call("SendInput", "tay", [pane, b"exit 7\n"])
        expect(card.locator(".state")).to_have_text("exited(7)")
        expect(card.locator("pre")).to_contain_text("red-42")  # (its last screen)
        page.screenshot(path=tmp_path / "overview-live.png")
    wait_for(lambda: _clients(service, other) == [], what="nothing watched with no page open")
    assert errors == []


def test_the_refusals_over_plain_http(service: Service, web: str) -> None:
    parts = urlsplit(web)
    own = f"{parts.hostname}:{parts.port}"
    assert _get(web, "/").status == 401, "no cookie"
    assert _get(web, f"{parts.path}?{parts.query}", {"Host": "evil.example"}).status == 421
    login = _get(web, f"{parts.path}?{parts.query}", {"Host": own})
    assert login.status == 303
    cookie = login.headers["Set-Cookie"].split(";")[0]
    assert _get(web, f"{parts.path}?{parts.query}").status == 403, "the link is spent"
    assert _get(web, "/api/panes", {"Cookie": cookie}).status == 200
    foreign = {"Cookie": cookie, "Origin": "http://127.0.0.1:1"}
    assert _get(web, "/api/panes", foreign).status == 403
    assert _get(web, "/", {"Cookie": cookie, "Host": f"localhost:{parts.port}"}).status == 200


def test_only_loopback_addresses_are_listened_on(service: Service) -> None:
    refused = service.muxctl("web", "--no-open", "--listen", "0.0.0.0:0")
    assert refused.returncode == 2
    assert "not a loopback address" in refused.stderr
    wrong = service.muxctl("web", "--no-open", "--listen", "here")
    assert wrong.returncode == 2 and "give ADDR:PORT" in wrong.stderr


def test_the_browser_is_opened_through_a_file_only_the_user_reads(
    service: Service, tmp_path: Path
) -> None:
    """The link never goes into a process's arguments (other users can read those)."""
    opened = tmp_path / "opened"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "xdg-open"
    fake.write_text(f'#!/bin/sh\necho "$@" > {opened}\n')
    fake.chmod(0o755)
    env = {**service.env, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    process = service.muxctl_process("web", env=env)
    try:
        assert process.stdout is not None
        link = process.stdout.readline().strip()
        wait_for(lambda: opened.exists() and opened.read_text().strip(), what="xdg-open run")
        argument = opened.read_text().strip()
        assert "token" not in argument and argument.startswith("file://")
        page = Path(argument.removeprefix("file://"))
        assert page.stat().st_mode & 0o777 == 0o600
        assert link in page.read_text()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
