"""muxctl.pane_numbers: tmux's display-panes — each pane's index in its middle, a digit
focusing that pane, any other key putting the panes back."""

from muxctl.chooser import Chosen
from muxctl.copy_mode import Ended
from muxctl.pane_numbers import FOCUSED, OTHER, RESET, PaneNumbers


def test_a_digit_chooses_the_pane_of_that_index_any_other_key_none() -> None:
    numbers = PaneNumbers(window=4, panes=[7, 3, 9], focus=3)
    assert numbers.feed(["2"]) == Chosen(4, 9)
    assert numbers.feed(["0", "1"]) == Chosen(4, 7), "the first key decides"
    assert numbers.feed(["3"]) == Ended(), "no pane of index 3"
    assert numbers.feed(["Escape"]) == Ended() and numbers.feed([]) is None


def test_each_cover_is_as_wide_as_its_region_with_the_label_in_the_middle() -> None:
    numbers = PaneNumbers(window=1, panes=[7, 3], focus=3)
    rows, cursor = numbers.cover(3, (5, 20), corner=True)
    plain = [row.replace(FOCUSED, "").replace(OTHER, "").replace(RESET, "") for row in rows]
    assert [len(row) for row in plain] == [20, 20, 20, 20, 19]  # (the corner's last cell)
    assert plain[2] == "     1 · pane 3     " and FOCUSED in rows[2]
    assert cursor == (2, 4)
    other, _ = numbers.cover(7, (3, 6), corner=False)
    assert OTHER in other[1] and other[1].replace(OTHER, "").replace(RESET, "") == " 0 · p"
