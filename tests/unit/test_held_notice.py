"""The policy of the desktop's "N panes are waiting" without a bus or a muxd
(docs/desktop.md#panes-waiting-to-start): sent once, its body bounded to five
names, withdrawn once none waits (also when that happened while it was being
sent), and "Restore all" going on past a pane that cannot start."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any, cast

from mux.config import Settings
from mux.desktop.held_notice import HeldNotice
from mux.protocol.errors import InvalidArgument


class FakeHeld:
    def __init__(self, ids: Sequence[int], refuses: int | None = None) -> None:
        self.ids = set(ids)
        self.refuses = refuses
        self.listeners: list[Any] = []

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, pane_id: object) -> bool:
        return pane_id in self.ids

    def start(self, pane: Any) -> None:
        if pane.id == self.refuses:
            raise InvalidArgument("it could not be started")
        self.ids.discard(pane.id)
        for listener in self.listeners:
            listener()


class FakeTable:
    def __init__(self, argvs: dict[int, tuple[str, ...]], refuses: int | None = None) -> None:
        self.panes = [SimpleNamespace(id=i, argv=argv) for i, argv in argvs.items()]
        self.held = FakeHeld(list(argvs), refuses)

    def __iter__(self) -> Any:
        return iter(self.panes)


class FakeNotifier:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str, list[str]]] = []
        self.withdrawn: list[int] = []

    def send(self, summary: str, body: str, actions: Any, answer: Any) -> None:
        self.sent.append((summary, body, [key for key, _ in actions]))

    def withdraw(self, notification_id: int) -> None:
        self.withdrawn.append(notification_id)


def _notice(table: FakeTable, **settings: Any) -> tuple[HeldNotice, FakeNotifier, list[int]]:
    notifier, opened = FakeNotifier(), cast(list[int], [])
    opener = cast(Any, SimpleNamespace(open_attached=opened.append))
    notice = HeldNotice(Settings(**settings), cast(Any, table), cast(Any, notifier), opener)
    table.held.listeners.append(notice.held_changed)
    return notice, notifier, opened


def test_sent_once_with_five_names_at_most() -> None:
    table = FakeTable({n: (f"/usr/bin/prog{n}", "arg") for n in range(9, 2, -1)})
    notice, notifier, _ = _notice(table)
    notice.restored()
    notice.restored()
    ((summary, body, keys),) = notifier.sent
    assert summary == "7 panes are waiting"
    assert body.split("\n") == [
        *(f"prog{n} (pane {n})" for n in range(3, 8)),
        "and 2 more (muxctl status)",
    ]
    assert keys == ["default", "restore-all", "review"]


def test_nothing_when_none_waits_or_notifications_are_off() -> None:
    quiet, notifier, _ = _notice(FakeTable({}))
    quiet.restored()
    off, notifier_off, _ = _notice(FakeTable({1: ("ssh",)}), notifications=False)
    off.restored()
    assert notifier.sent == notifier_off.sent == []


def test_withdrawn_when_the_last_starts_even_while_it_was_being_sent() -> None:
    table = FakeTable({1: ("ssh",), 2: ("make",)})
    notice, notifier, _ = _notice(table)
    notice.restored()
    notice.shown(41)
    table.held.start(table.panes[0])
    assert notifier.withdrawn == []
    table.held.start(table.panes[1])
    assert notifier.withdrawn == [41]
    table = FakeTable({1: ("ssh",)})
    notice, notifier, _ = _notice(table)
    notice.restored()
    table.held.start(table.panes[0])  # before the server answered
    notice.shown(42)
    assert notifier.withdrawn == [42]


def test_restore_all_goes_past_a_pane_that_cannot_start_and_review_opens_the_first() -> None:
    table = FakeTable({5: ("vim",), 3: ("ssh",), 4: ("make",)}, refuses=3)
    notice, notifier, opened = _notice(table)
    notice.restored()
    notice.shown(7)
    notice.closed()  # the server removes a notification whose action was taken
    notice.action("restore-all")
    assert table.held.ids == {3}
    assert notifier.withdrawn == [], "nothing left to withdraw"
    notice.action("review")
    notice.action("default")
    assert opened == [3, 3]
