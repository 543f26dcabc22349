"""A window's layout placed on a terminal (mux.protocol.regions): exact rects for small
trees (the rounding: halves up, so 80 columns in halves are 40, a border, then 39),
panes and borders tiling any terminal exactly, the pane across each border, the
characters of lines and junctions, the frame around the focused pane."""

from collections import Counter
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.strategies import DrawFn

from mux.protocol.layout import Direction, Leaf, Node, Split, panes_of
from mux.protocol.regions import (
    Border,
    Rect,
    Regions,
    border_cells,
    focus_border_cells,
    neighbour,
    place,
)

LINES = set("│─┼├┤┬┴┌┐└┘")


def h(*children: Node, ratios: tuple[float, ...] | None = None) -> Split:
    return Split("horizontal", ratios or _even(len(children)), children)


def v(*children: Node, ratios: tuple[float, ...] | None = None) -> Split:
    return Split("vertical", ratios or _even(len(children)), children)


def _even(count: int) -> tuple[float, ...]:
    return tuple(1 / count for _ in range(count))


# 1 on the left; 2 above 3 on the right.
NESTED = h(Leaf(1), v(Leaf(2), Leaf(3)))


def _cells(rect: Rect) -> list[tuple[int, int]]:
    return [
        (row, col)
        for row in range(rect.top, rect.top + rect.rows)
        for col in range(rect.left, rect.left + rect.cols)
    ]


def _line(border: Border) -> list[tuple[int, int]]:
    if border.vertical:
        return [(border.top + i, border.left) for i in range(border.length)]
    return [(border.top, border.left + i) for i in range(border.length)]


def _assert_tiles(regions: Regions, rows: int, cols: int) -> None:
    """Every cell of the terminal in exactly one pane or on exactly one border."""
    covered: Counter[tuple[int, int]] = Counter()
    for rect in regions.panes.values():
        assert rect.rows >= 0 and rect.cols >= 0
        covered.update(_cells(rect))
    for border in regions.borders:
        assert border.length > 0
        covered.update(_line(border))
    terminal = {(row, col) for row in range(rows) for col in range(cols)}
    assert set(covered) == terminal
    assert all(count == 1 for count in covered.values())


# -- concrete placements ---------------------------------------------------------------


def test_a_single_leaf_fills_the_terminal() -> None:
    assert place(Leaf(4), 24, 80) == Regions({4: Rect(0, 0, 24, 80)}, ())


def test_halves_of_80_columns_are_40_a_border_and_39() -> None:
    regions = place(h(Leaf(1), Leaf(2), ratios=(0.5, 0.5)), 24, 80)
    # 79 columns to share: the left half ends at round(39.5) = 40 (halves round up).
    assert regions.panes == {1: Rect(0, 0, 24, 40), 2: Rect(0, 41, 24, 39)}
    assert regions.borders == (Border(0, 40, 24, vertical=True),)


def test_the_nested_example() -> None:
    regions = place(NESTED, 24, 80)
    assert regions.panes == {
        1: Rect(0, 0, 24, 40),
        2: Rect(0, 41, 12, 39),  # 23 rows to share: round(11.5) = 12 above
        3: Rect(13, 41, 11, 39),
    }
    assert regions.borders == (
        Border(0, 40, 24, vertical=True),
        Border(12, 41, 39, vertical=False),
    )
    _assert_tiles(regions, 24, 80)


def test_a_quarter_and_three_quarters() -> None:
    regions = place(h(Leaf(1), Leaf(2), ratios=(0.25, 0.75)), 24, 80)
    # round(79 * 0.25) = round(19.75) = 20
    assert regions.panes == {1: Rect(0, 0, 24, 20), 2: Rect(0, 21, 24, 59)}
    assert regions.borders == (Border(0, 20, 24, vertical=True),)
    regions = place(v(Leaf(1), Leaf(2), ratios=(0.25, 0.75)), 24, 80)
    # round(23 * 0.25) = round(5.75) = 6
    assert regions.panes == {1: Rect(0, 0, 6, 80), 2: Rect(7, 0, 17, 80)}
    assert regions.borders == (Border(6, 0, 80, vertical=False),)


def test_three_children() -> None:
    regions = place(h(Leaf(1), Leaf(2), Leaf(3)), 24, 80)
    # 78 columns to share: ends at round(26) and round(52)
    assert regions.panes == {
        1: Rect(0, 0, 24, 26),
        2: Rect(0, 27, 24, 26),
        3: Rect(0, 54, 24, 26),
    }
    assert regions.borders == (Border(0, 26, 24, True), Border(0, 53, 24, True))
    regions = place(v(Leaf(1), Leaf(2), Leaf(3), ratios=(0.5, 0.25, 0.25)), 24, 80)
    # 22 rows to share: ends at round(11) and round(16.5) = 17
    assert regions.panes == {1: Rect(0, 0, 11, 80), 2: Rect(12, 0, 6, 80), 3: Rect(19, 0, 5, 80)}


def test_each_child_gets_a_cell_taken_from_the_largest() -> None:
    regions = place(h(Leaf(1), Leaf(2), Leaf(3), ratios=(0.98, 0.01, 0.01)), 5, 10)
    # 8 columns to share: by the ratios 8, 0 and 0; the last two take one each from the first
    assert regions.panes == {1: Rect(0, 0, 5, 6), 2: Rect(0, 7, 5, 1), 3: Rect(0, 9, 5, 1)}


def test_too_small_a_terminal_leaves_panes_empty_and_drops_borders() -> None:
    regions = place(h(Leaf(1), Leaf(2), Leaf(3)), 3, 1)
    assert [rect.cols for rect in regions.panes.values()] == [0, 0, 0]
    assert regions.borders == (Border(0, 0, 3, vertical=True),)
    _assert_tiles(regions, 3, 1)
    assert place(NESTED, 0, 0).borders == ()
    assert place(NESTED, -1, 5).borders == ()


# -- any tree on any terminal ----------------------------------------------------------------


def _tree(draw: DrawFn, ids: list[int], depth: int) -> Node:
    if len(ids) == 1:
        return Leaf(ids[0])
    if depth == 1:
        groups = [[pane] for pane in ids]
    else:
        count = draw(st.integers(2, min(len(ids), 4)))
        cuts = sorted(
            draw(st.sets(st.integers(1, len(ids) - 1), min_size=count - 1, max_size=count - 1))
        )
        groups = [ids[a:b] for a, b in zip([0, *cuts], [*cuts, len(ids)], strict=True)]
    weights = draw(st.lists(st.integers(1, 100), min_size=len(groups), max_size=len(groups)))
    direction: Direction = draw(st.sampled_from(["horizontal", "vertical"]))
    return Split(
        direction,
        tuple(weight / sum(weights) for weight in weights),
        tuple(_tree(draw, group, depth - 1) for group in groups),
    )


@st.composite
def trees(draw: DrawFn) -> Node:
    """Valid trees: distinct pane ids, at most 12 leaves, at most 4 levels of splits."""
    ids = draw(st.lists(st.integers(1, 2**32), min_size=1, max_size=12, unique=True))
    return _tree(draw, ids, draw(st.integers(1, 4)))


@st.composite
def placed(draw: DrawFn) -> tuple[Node, int, int]:
    """A tree and a terminal big enough for it (at least two cells a leaf each way)."""
    tree = draw(trees())
    leaves = len(list(panes_of(tree)))
    return tree, draw(st.integers(2 * leaves, 60)), draw(st.integers(2 * leaves, 200))


@given(placed())
def test_panes_and_borders_tile_the_terminal(case: tuple[Node, int, int]) -> None:
    tree, rows, cols = case
    regions = place(tree, rows, cols)
    assert list(regions.panes) == list(panes_of(tree))
    _assert_tiles(regions, rows, cols)
    drawn = border_cells(regions)
    assert set(drawn) == {cell for border in regions.borders for cell in _line(border)}
    assert set(drawn.values()) <= LINES


@given(trees(), st.integers(-1, 5), st.integers(-1, 8))
def test_tiny_terminals_never_raise(tree: Node, rows: int, cols: int) -> None:
    regions = place(tree, rows, cols)
    assert set(regions.panes) == set(panes_of(tree))
    _assert_tiles(regions, max(rows, 0), max(cols, 0))
    border_cells(regions)
    for pane in regions.panes:
        focus_border_cells(regions, pane)
        for side in ("left", "right", "up", "down"):
            neighbour(regions, pane, side)


@given(st.data(), st.integers(2, 12))
def test_a_split_shares_its_span_by_its_ratios(data: st.DataObject, count: int) -> None:
    weights = data.draw(st.lists(st.integers(1, 100), min_size=count, max_size=count))
    ratios = tuple(weight / sum(weights) for weight in weights)
    span = data.draw(st.integers(2 * count - 1, 300))  # room for a cell each
    tree = h(*(Leaf(pane) for pane in range(1, count + 1)), ratios=ratios)
    sizes = [rect.cols for rect in place(tree, 1, span).panes.values()]
    assert sum(sizes) == span - (count - 1)
    assert min(sizes) >= 1
    avail = span - (count - 1)
    for size, ratio in zip(sizes, ratios, strict=True):
        assert abs(size - avail * ratio) < count + 1  # (the floor of one cell each aside)


# -- the pane across a border --------------------------------------------------------------


@pytest.mark.parametrize(
    ("pane", "side", "expected"),
    [
        (1, "right", 2),  # 2 and 3 both across: 2 overlaps 12 rows, 3 only 11
        (1, "left", None),
        (1, "up", None),
        (1, "down", None),
        (2, "left", 1),
        (2, "down", 3),
        (2, "up", None),
        (2, "right", None),
        (3, "left", 1),
        (3, "up", 2),
        (3, "down", None),
        (3, "right", None),
        (9, "left", None),  # no such pane
    ],
)
def test_neighbours_in_the_nested_example(
    pane: int, side: Literal["left", "right", "up", "down"], expected: int | None
) -> None:
    assert neighbour(place(NESTED, 24, 80), pane, side) == expected


def test_neighbours_tie_to_the_top_most_and_left_most() -> None:
    # 25 rows: 1 and 2 have 12 each, both across from 3
    regions = place(h(v(Leaf(1), Leaf(2)), Leaf(3)), 25, 81)
    assert regions.panes[1].rows == regions.panes[2].rows
    assert neighbour(regions, 3, "left") == 1
    regions = place(v(Leaf(3), h(Leaf(1), Leaf(2))), 25, 81)
    assert regions.panes[1].cols == regions.panes[2].cols
    assert neighbour(regions, 3, "down") == 1


def test_a_pane_with_no_cells_has_no_neighbours() -> None:
    regions = place(h(Leaf(1), Leaf(2), Leaf(3)), 3, 1)
    assert neighbour(regions, 1, "right") is None


# -- drawing -------------------------------------------------------------------------------


def test_lines_and_the_junction_of_the_nested_example() -> None:
    drawn = border_cells(place(NESTED, 24, 80))
    assert len(drawn) == 24 + 39
    assert drawn[(12, 40)] == "├"  # the right part's line meets the line down the middle
    assert drawn[(0, 40)] == drawn[(11, 40)] == drawn[(13, 40)] == drawn[(23, 40)] == "│"
    assert drawn[(12, 41)] == drawn[(12, 79)] == "─"


def test_the_other_junctions() -> None:
    drawn = border_cells(place(h(v(Leaf(1), Leaf(2)), Leaf(3)), 25, 81))
    assert drawn[(12, 40)] == "┤"
    drawn = border_cells(place(v(h(Leaf(1), Leaf(2)), h(Leaf(3), Leaf(4))), 25, 81))
    assert drawn[(12, 40)] == "┼"
    assert drawn[(12, 0)] == drawn[(12, 80)] == "─"
    drawn = border_cells(place(v(Leaf(1), h(Leaf(2), Leaf(3))), 25, 81))
    assert drawn[(12, 40)] == "┬"
    drawn = border_cells(place(v(h(Leaf(1), Leaf(2)), Leaf(3)), 25, 81))
    assert drawn[(12, 40)] == "┴"
    drawn = border_cells(place(v(h(Leaf(1), Leaf(2)), h(Leaf(3), Leaf(4), Leaf(5))), 10, 40))
    # 9 rows to share: the line on row round(4.5) = 5; below, 38 columns: 13, 12 and 13
    middle = "─" * 13 + "┬" + "─" * 6 + "┴" + "─" * 5 + "┬" + "─" * 13
    assert "".join(drawn[(5, col)] for col in range(40)) == middle


def test_the_frame_of_the_focused_pane() -> None:
    regions = place(NESTED, 24, 80)
    assert focus_border_cells(regions, 1) == {(row, 40) for row in range(24)}
    # beside it and below it, the corner where the two lines meet included
    assert focus_border_cells(regions, 2) == {(row, 40) for row in range(13)} | {
        (12, col) for col in range(41, 80)
    }
    assert focus_border_cells(regions, 3) == {(row, 40) for row in range(12, 24)} | {
        (12, col) for col in range(41, 80)
    }
    assert focus_border_cells(regions, 9) == set()
    assert focus_border_cells(place(Leaf(1), 24, 80), 1) == set()
