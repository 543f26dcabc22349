"""muxctl.view_state.Shown: the pane focused before (`;`) is the last other pane of
the same window to have had the focus, however the focus moved (a key, a click, muxd)."""

from mux.protocol.layout import Leaf
from muxctl.view_state import Shown


def test_the_pane_focused_before_is_remembered_within_a_window_only() -> None:
    shown = Shown((24, 80))
    shown.follow(1, Leaf(5), 5)
    assert shown.last_focus is None
    shown.follow(1, Leaf(5), 6)  # muxd says the focus moved (an arrow, another client)
    assert shown.last_focus == 5
    shown.focus_on(6)  # (the same pane again: nothing new)
    assert shown.last_focus == 5
    shown.focus_on(7)  # a click
    assert (shown.focus, shown.last_focus) == (7, 6)
    shown.follow(2, Leaf(9), 9)  # another window
    assert shown.last_focus is None
