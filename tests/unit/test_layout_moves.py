"""Moving a pane's border (mux.protocol.layout.move_border), as tmux's resize-pane."""

import pytest

from mux.protocol.layout import Leaf, Split, move_border

# 1 | (2 over 3)
TREE = Split("horizontal", (0.5, 0.5), (Leaf(1), Split("vertical", (0.5, 0.5), (Leaf(2), Leaf(3)))))


def ratios(tree: object) -> tuple[tuple[float, ...], tuple[float, ...]]:
    assert isinstance(tree, Split)
    inner = tree.children[1]
    assert isinstance(inner, Split)
    return tuple(round(r, 3) for r in tree.ratios), tuple(round(r, 3) for r in inner.ratios)


@pytest.mark.parametrize(
    ("pane", "side", "cells", "size", "moved"),
    [
        (1, "right", 8, 40, ((0.6, 0.4), (0.5, 0.5))),  # its right border goes right
        (2, "left", 8, 40, ((0.4, 0.6), (0.5, 0.5))),  # (the border of its split)
        (2, "right", 8, 40, ((0.6, 0.4), (0.5, 0.5))),  # nothing right of it: shrinks
        (2, "down", 4, 10, ((0.5, 0.5), (0.7, 0.3))),
        (3, "down", 4, 10, ((0.5, 0.5), (0.7, 0.3))),  # nothing below it: shrinks
    ],
)
def test_a_border_moves_as_tmux_moves_it(
    pane: int, side: str, cells: int, size: int, moved: object
) -> None:
    assert ratios(move_border(TREE, pane, side, cells, size)) == moved


@pytest.mark.parametrize(
    ("pane", "side", "cells"),
    [(1, "up", 1), (1, "right", 40), (9, "left", 1), (1, "left", 0)],
)
def test_no_border_that_way_or_that_far(pane: int, side: str, cells: int) -> None:
    """No split that way (1 is alone top to bottom), past its neighbour, no such pane."""
    assert move_border(TREE, pane, side, cells, 40) is None


def test_ratios_still_sum_to_one() -> None:
    tree = move_border(TREE, 2, "down", 3, 11)
    assert tree is not None
    assert ratios(tree)[1][0] + ratios(tree)[1][1] == pytest.approx(1)
