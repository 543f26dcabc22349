"""muxctl.chooser: every window and its panes, one picked with the keys of tmux's
choose-tree."""

import json

from muxctl.chooser import Chooser, Chosen, choices, listing
from muxctl.copy_mode import Ended


def window(wid: int, panes: list[int], title: str = "") -> dict[str, object]:
    layout = {"pane": panes[0]} if len(panes) == 1 else {
        "split": "horizontal",
        "ratios": [1 / len(panes)] * len(panes),
        "children": [{"pane": p} for p in panes],
    }  # fmt: skip
    return {"id": wid, "title": title, "layout": json.dumps(layout), "focused_pane": panes[0]}


WINDOWS = [window(1, [1, 2], "build\x1b[31m"), window(4, [4])]
PANES = [
    {"id": 1, "title": "", "argv": ["/usr/bin/vim"], "cwd": "/src"},
    {"id": 2, "title": "tests", "argv": ["bash"], "cwd": "/src"},
    {"id": 4, "title": "", "argv": ["top"], "cwd": "/", "state": "exited", "exit_status": 0},
]


def test_every_window_then_its_panes_escaped() -> None:
    texts = [choice.text for choice in choices(WINDOWS, PANES)]
    assert texts == [
        "(0) build\\x1b[31m · 2 panes",
        "    ├─ 1: vim · /src",
        "    └─ 2: tests · /src",
        "(1) top · 1 pane",
        "    └─ 4: top · / · exited (0)",
    ]


def test_keys_move_enter_chooses_a_digit_goes_at_once() -> None:
    lines = choices(WINDOWS, PANES)
    chooser = Chooser(lines, (1, 2), rows=3, cols=30)
    assert chooser.selected == 2  # the pane shown, selected
    assert chooser.feed(["Down", "j"]) is None and chooser.selected == 4
    rows, cursor = chooser.drawn(corner=False)
    assert cursor == (2, 0) and rows[2].startswith("\x1b[0;7m    └─ 4: top")  # scrolled
    assert all(len(row.replace("\x1b[0;7m", "").replace("\x1b[0m", "")) == 30 for row in rows)
    assert chooser.feed(["Enter"]) == Chosen(4, 4)
    assert Chooser(lines, (1, 1), 3, 30).feed(["1"]) == Chosen(4, 4)
    assert Chooser(lines, (1, 1), 3, 30).feed(["k", "q"]) == Ended()


def test_a_listing_is_only_read_enter_leaves_and_digits_pick_nothing() -> None:
    lines = listing(["C-b %        split-horizontal", "C-b 0        window-0"])
    assert Chooser(lines, (1, 2), rows=1, cols=30).feed(["0", "Down"]) is None
    assert Chooser(lines, (1, 2), rows=1, cols=30).feed(["Enter"]) == Ended()
