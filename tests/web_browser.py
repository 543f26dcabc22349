"""`muxctl web` and a real browser for the tests (tests/integration/test_web*.py):
the server as its own process, Debian's chromium driven by Playwright through its
executable_path (Playwright's own browsers are never downloaded)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Page, sync_playwright

from tests.harness import Service

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def web(service: Service) -> Iterator[str]:
    """A running `muxctl web --no-open`: the login link it printed."""
    with serving(service) as link:
        yield link


@contextmanager
def serving(service: Service, *arguments: str) -> Iterator[str]:
    """`muxctl web --no-open` against `service`, until the block ends: its login link."""
    process = service.muxctl_process("web", "--no-open", *arguments)
    try:
        assert process.stdout is not None
        link = process.stdout.readline().strip()
        assert link.startswith(("http://", "https://")) and "/login?token=" in link, (
            link,
            process.stderr and process.stderr.read(),
        )
        yield link
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0, "muxctl web ends cleanly on SIGTERM"


@contextmanager
def browser_page(
    width: int = 1200, height: int = 800, *, trust_any_certificate: bool = False
) -> Iterator[tuple[Page, list[str]]]:
    """A page in a headless chromium, and the errors its console logs meanwhile (a
    script or style the CSP refused would be one)."""
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--disable-gpu"])
        try:
            page = browser.new_page(
                viewport={"width": width, "height": height},
                ignore_https_errors=trust_any_certificate,
            )
            page.on(
                "console", lambda message: message.type == "error" and errors.append(message.text)
            )
            yield page, errors
        finally:
            browser.close()
