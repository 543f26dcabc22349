"""The web view across federation (docs/web.md#the-overview): a host's panes in the
hub's overview beside its own, their screens read through the hub and kept up to date,
and the host's link on the hosts page, in a real browser."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.federation.conftest import TwoHosts
from tests.federation.test_remote_attach import hub
from tests.harness import Service
from tests.web_browser import browser_page, serving

__all__ = ["hub"]  # (a fixture)

BASH = ["bash", "--norc", "--noprofile", "-i"]


def test_the_overview_shows_a_hosts_panes_beside_its_own(two_hosts: TwoHosts, hub: Service) -> None:
    satellite = two_hosts.satellite
    far = satellite.spawn(BASH, env={"PS1": "far$ "})
    satellite.wait_screen(far, "far$")
    near = hub.spawn(["sh", "-c", "echo near-$((6*7)); exec sleep 600"])
    hub.wait_screen(near, "near-42")
    with serving(hub) as link, browser_page() as (page, errors):
        page.goto(link)
        remote = page.locator(f'article.pane[data-host="sat"][data-pane="{far}"]')
        expect(remote.locator("pre")).to_contain_text("far$")
        expect(remote.locator("header")).to_contain_text(f"sat: {far}: ")
        expect(remote.locator("a.open")).to_be_hidden()  # (muxctl --host sat attach)
        local = page.locator(f'article.pane[data-host=""][data-pane="{near}"]')
        expect(local.locator("pre")).to_contain_text("near-42")
        satellite.call("SendInput", "tay", [far, b"echo far-away-$((6*7))\r"])
        expect(remote.locator("pre")).to_contain_text("far-away-42")  # (read again)
        page.click("nav >> text=hosts")
        expect(page.locator('tr[data-host="sat"] .link')).to_have_text("up")
    assert errors == []
