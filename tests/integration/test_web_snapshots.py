"""The snapshots page of `muxctl web` in a real browser: the history, a snapshot's dry
run with pictures of its panes' saved contents, a restore of the panes chosen; and a
pane held by `restore = "ask"` started from the overview (docs/web.md)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from tests.harness import Service, wait_for
from tests.web_browser import browser_page, serving

CONFIG = "kill_grace_seconds = 0.5\n"


def _painter(word: str) -> list[str]:
    return ["sh", "-c", f"printf '\\033[32m%s\\033[0m\\n' {word}-$((6*7)); exec sleep 900"]


def test_look_at_a_snapshot_then_restore_the_panes_chosen(tmp_root: Path, tmp_path: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config=CONFIG).start()
    try:
        kept = svc.spawn(_painter("kept"), title="kept one")
        left = svc.spawn(_painter("left"), title="left out")
        svc.wait_screen(kept, "kept-42")
        svc.wait_screen(left, "left-42")
        _path, generation = svc.call("Snapshot")
        for pane in (kept, left):
            svc.call("Kill", "t", [pane])
        wait_for(lambda: not svc.panes(), what="both panes closed")
        with serving(svc) as link, browser_page() as (page, errors):
            page.goto(link)
            page.click("nav >> text=snapshots")
            page.click(f'button.snapshot[data-generation="{generation}"]')
            kept_card = page.locator(f'article.pane[data-snapshot-pane="{kept}"]')
            expect(kept_card.locator("pre")).to_contain_text("kept-42")  # its saved contents
            expect(kept_card.locator("pre span", has_text="kept-42")).to_have_css(
                "color", "rgb(0, 205, 0)"
            )
            expect(kept_card.locator("header")).to_contain_text("kept one")
            assert svc.panes() == {}, "looking starts nothing (a dry run)"
            page.screenshot(path=tmp_path / "snapshots.png")
            page.locator(f'article.pane[data-snapshot-pane="{left}"] input').uncheck()
            page.click("button.restore")
            expect(page.locator(".outcome")).to_contain_text("started 1 panes")
            (started,) = svc.panes().values()
            assert started["argv"] == _painter("kept") and started["state"] == "running"
        assert errors == []
    finally:
        svc.stop()


def test_a_held_pane_is_started_from_the_overview(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config=CONFIG + 'restore = "ask"\n').start()
    try:
        pane = svc.spawn(_painter("held"))
        svc.wait_screen(pane, "held-42")
        assert svc.stop() == 0
        svc.start()
        wait_for(lambda: svc.panes().get(pane, {}).get("state") == "held", what="held")
        with serving(svc) as link, browser_page() as (page, errors):
            page.goto(link)
            card = page.locator(f'article.pane[data-pane="{pane}"]')
            expect(card.locator(".state")).to_have_text("held")
            card.locator("button.start").click()
            expect(card.locator(".state")).to_have_text("running")
            expect(card.locator("button.start")).to_be_hidden()
        assert svc.panes()[pane]["state"] == "running"
        assert errors == []
    finally:
        svc.stop()
