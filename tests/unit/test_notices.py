"""What programs ask to tell their user, parsed and cleaned; the notifier's policy
without a bus (docs/desktop.md#notifications)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from mux.config import Settings
from mux.desktop.notifier import AUTOSAVE_FAILING_SECONDS, Notifier
from mux.desktop.terminal import TerminalOpener, terminal_prefix
from mux.protocol.notices import AppNotification, CommandFinished, parse_notification, shown
from mux.protocol.osc import OscScanner


def test_osc_notifications_are_parsed() -> None:
    scanner = OscScanner(frozenset())
    events = scanner.feed(
        b"\x1b]9;done\x07\x1b]9;9;/tmp\x07\x1b]9;4;1;50\x07"
        b"\x1b]777;notify;T;B\x1b\\\x1b]777;other;x\x07"
        b"\x1b]99;i=1:p=body;hello\x07\x1b]99;e=1;aGk=\x07\x1b]99;d=0;part\x07"
    )
    notes = [e for e in events if isinstance(e, AppNotification)]
    assert notes == [
        AppNotification("", "done"),
        AppNotification("T", "B"),
        AppNotification("", "hello"),
        AppNotification("hi", ""),
    ]


def test_text_is_bounded_and_printable() -> None:
    assert shown("a\x1b[31mb\x07c\n\td", 100) == "a\\x1b[31mb\\x07c d"
    assert shown("x" * 200, 10) == "x" * 9 + "…"
    assert parse_notification(b"9", b"") is None


def test_the_terminal_is_the_first_found() -> None:
    found = {"konsole": "/usr/bin/konsole", "xterm": "/usr/bin/xterm"}
    assert terminal_prefix(None, found.get) == ["konsole", "-e"]
    assert terminal_prefix(["foot"], found.get) == ["foot"]
    assert terminal_prefix(None, {}.get) is None


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _notifier(clock: FakeClock, attached: int = 0) -> tuple[Notifier, list[str]]:
    sent: list[str] = []
    notifier = Notifier(
        Settings(notify_command_seconds=10, notify_min_interval_seconds=5),
        lambda pane: attached,
        TerminalOpener(None),
        clock,
    )
    cast(Any, notifier)._send = lambda summary, body, pane: sent.append(summary)
    return notifier, sent


def test_commands_rates_and_attached_panes() -> None:
    clock = FakeClock()
    notifier, sent = _notifier(clock)
    pane = cast(Any, SimpleNamespace(id=3, title="t"))
    notifier.pane_notice(pane, CommandFinished("make", 0, 9.9))  # too short
    notifier.pane_notice(pane, CommandFinished("make", 0, 10))
    notifier.pane_notice(pane, AppNotification("hi", ""))  # within 5 s of the last
    clock.now = 5
    notifier.pane_notice(pane, CommandFinished("make test", 2, 3700))
    assert sent == ["make: finished", "make test: failed (status 2)"]
    attached, none = _notifier(clock, attached=1)
    attached.pane_notice(pane, AppNotification("hi", ""))
    assert none == []


def test_an_autosave_failing_for_30_s_is_told_once() -> None:
    clock = FakeClock()
    notifier, sent = _notifier(clock)
    notifier.autosave_failed("disk full")
    clock.now = AUTOSAVE_FAILING_SECONDS - 1
    notifier.autosave_failed("disk full")
    assert sent == []
    clock.now = AUTOSAVE_FAILING_SECONDS + 1
    notifier.autosave_failed("disk full")
    notifier.autosave_failed("disk full")
    assert sent == ["mux cannot save the session"]
    notifier.autosave_saved()
    clock.now += 100
    notifier.autosave_failed("again")
    assert len(sent) == 1, "a new failure starts its own 30 s"
