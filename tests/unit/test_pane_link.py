"""A window view's link to a pane (muxctl.pane_link), once closed: the view may still hold
its descriptor from the select that showed another window in the same round (the race
behind an `AssertionError` that ended a view switching windows with `Ctrl-b n`)."""

from pathlib import Path

from muxctl.pane_link import PaneLink


def test_a_closed_link_says_nothing_and_writes_nothing() -> None:
    link = PaneLink(Path("/nonexistent/mux.sock"), 3, (24, 80))
    link.close()
    assert link.ended
    assert link.receive() == []
    link.write()  # (nothing to write to: no error)
