"""Which window a key behind the prefix shows (muxctl.window_commands.pick_window)."""

import pytest

from muxctl.window_commands import pick_window

WINDOWS = [2, 5, 9]  # ids, in order: indexes 0, 1, 2


@pytest.mark.parametrize(
    ("current", "command", "last", "shown"),
    [
        (2, "next-window", None, 5),
        (9, "next-window", None, 2),  # around the end, as tmux
        (2, "previous-window", None, 9),
        (5, "previous-window", None, 2),
        (5, "window-0", None, 2),
        (5, "window-2", None, 9),
        (5, "window-3", None, None),  # no such index
        (5, "last-window", 9, 9),
        (5, "last-window", None, None),
        (5, "last-window", 7, None),  # closed since
        (7, "next-window", None, 2),  # the window shown is gone: the first
    ],
)
def test_pick_window(current: int, command: str, last: int | None, shown: int | None) -> None:
    assert pick_window(current, WINDOWS, command, last) == shown


def test_no_windows_at_all() -> None:
    assert pick_window(1, [], "next-window", None) is None
