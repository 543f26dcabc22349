"""Which window a key behind the prefix shows (muxctl.window_commands.pick_window), and
windows read from ListWindows."""

import pytest

from mux.protocol.layout import Leaf
from muxctl.errors import CtlError
from muxctl.window_commands import layout_of, pick_window

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


def test_a_layout_muxctl_cannot_read_is_said_not_raised() -> None:
    """muxd never writes one; a view that got one ends with a message, no traceback."""
    for layout in ("{", '{"pane": -1}', "[" * 5000 + "]" * 5000, '{"split": "diagonal"}'):
        with pytest.raises(CtlError, match="mux sent window 7 a layout muxctl cannot read"):
            layout_of({"id": 7, "layout": layout})
    assert layout_of({"id": 7, "layout": '{"pane": 3}'}) == Leaf(3)
