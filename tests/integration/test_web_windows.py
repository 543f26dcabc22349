"""The windows and hosts pages of `muxctl web` in a real browser (docs/web.md): each
window's split drawn to scale with its regions live, the focused pane marked; each
host's link with its state and last error."""

from __future__ import annotations

from pathlib import Path

from dbus_fast import Variant
from playwright.sync_api import expect

from tests.harness import Service, wait_for
from tests.web_browser import browser_page, web

__all__ = ["web"]  # (a fixture)

BASH = ["bash", "--norc", "--noprofile", "-i"]


def test_a_window_drawn_to_scale_with_live_regions(
    service: Service, web: str, tmp_path: Path
) -> None:
    left = service.spawn(BASH, env={"PS1": "left$ "})
    window = int(service.panes()[left]["window"])
    options = {"argv": Variant("as", BASH), "env": Variant("a{ss}", {"PS1": "right$ "})}
    right, _, _ = service.call("SplitPane", "tsda{sv}", [left, "horizontal", 0.25, options])
    service.wait_screen(int(right), "right$")
    with browser_page() as (page, errors):
        page.goto(web)
        page.click("nav >> text=windows")
        layout = page.locator(f'section.window-layout[data-window="{window}"]')
        left_box = layout.locator(f'.region[data-pane="{left}"]')
        right_box = layout.locator(f'.region[data-pane="{right}"]')
        expect(left_box.locator("pre")).to_contain_text("left$")
        expect(right_box.locator("pre")).to_contain_text("right$")
        widths = [box.bounding_box()["width"] for box in (left_box, right_box)]  # type: ignore[index]
        assert abs(widths[1] / sum(widths) - 0.25) < 0.03, widths
        expect(right_box).to_have_class("region focused")  # (a split focuses the new pane)
        service.call("SendInput", "tay", [left, b"echo live-$((2*21))\n"])
        expect(left_box.locator("pre")).to_contain_text("live-42")
        page.screenshot(path=tmp_path / "windows.png")
    assert errors == []


def test_the_hosts_and_their_links(service: Service, web: str, tmp_path: Path) -> None:
    with browser_page() as (page, errors):
        page.goto(web)
        page.click("nav >> text=hosts")
        expect(page.locator("main")).to_contain_text("no hosts")
        service.muxctl("hosts", "add", "far", "nobody@127.0.0.1", check=True)
        row = page.locator('tr[data-host="far"]')
        expect(row).to_contain_text("nobody@127.0.0.1")
        wait_for(
            lambda: row.locator(".link").inner_text() in ("down", "refused", "dialing"),
            what="the link's state",
        )
        page.screenshot(path=tmp_path / "hosts.png")
    assert errors == []
