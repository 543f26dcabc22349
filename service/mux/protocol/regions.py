"""A window's layout placed on a terminal of rows x cols: where each pane goes and where
the lines between them are drawn, for the split view of `muxctl attach`
(docs/windows.md#layouts).

A split of n children spends one cell between each two neighbours on a border line
and shares the rest by its ratios: child i ends at round(avail * (r1 + … + ri)),
rounding halves up, so the sizes add up exactly. Each child gets at least one cell
when there is room for it; on a terminal too small for the tree, panes may get no
cells at all and borders that do not fit are dropped, but the panes and the border
cells always tile the terminal exactly (each cell is in one pane or on one border).

Also: the pane across a border from another (moving the focus), the character to
draw in each border cell (lines and their junctions, as tmux draws them) and the
border cells around a pane (drawn highlighted for the focused one).

Pure, no I/O.
"""

import math
from dataclasses import dataclass, field
from typing import Literal

from mux.protocol.layout import Leaf, Node

Side = Literal["left", "right", "up", "down"]
Cell = tuple[int, int]  # (row, column), 0-based

VERTICAL_LINE = "│"
HORIZONTAL_LINE = "─"


@dataclass(frozen=True, slots=True)
class Rect:
    top: int  # 0-based row
    left: int  # 0-based column
    rows: int
    cols: int


@dataclass(frozen=True, slots=True)
class Border:
    """A line between two parts of a split: '│' cells going down `length` rows from
    (top, left) when `vertical`, else '─' cells going right `length` columns."""

    top: int
    left: int
    length: int
    vertical: bool
    # Whose line it is, to move it (mux.protocol.border_drag): the split's place in the
    # tree (each step a child's index), the child it follows, and the split's span
    # along its axis (first cell, cells).
    split: tuple[int, ...] = field(default=(), compare=False)
    after: int = field(default=0, compare=False)
    span: tuple[int, int] = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Regions:
    panes: dict[int, Rect]  # every pane of the layout
    borders: tuple[Border, ...]


def _empty(rect: Rect) -> bool:
    return rect.rows <= 0 or rect.cols <= 0


def _line(border: Border) -> list[Cell]:
    if border.vertical:
        return [(border.top + i, border.left) for i in range(border.length)]
    return [(border.top, border.left + i) for i in range(border.length)]


# -- placing -----------------------------------------------------------------------


def place(layout: Node, rows: int, cols: int) -> Regions:
    """`layout` on a terminal of `rows` x `cols` (a size below 0 counts as 0)."""
    panes: dict[int, Rect] = {}
    borders: list[Border] = []
    _place(layout, Rect(0, 0, max(0, rows), max(0, cols)), panes, borders, ())
    return Regions(panes, tuple(borders))


def _place(
    node: Node, area: Rect, panes: dict[int, Rect], borders: list[Border], path: tuple[int, ...]
) -> None:
    if isinstance(node, Leaf):
        panes[node.pane] = area
        return
    side_by_side = node.direction == "horizontal"
    span = area.cols if side_by_side else area.rows
    start = area.left if side_by_side else area.top
    across = area.rows if side_by_side else area.cols  # each child's, and each border's
    offset = 0
    last = len(node.children) - 1
    sizes = split_sizes(node.ratios, span)
    for i, (child, size) in enumerate(zip(node.children, sizes, strict=True)):
        at = start + min(offset, span)
        if side_by_side:
            part = Rect(area.top, at, area.rows, size)
        else:
            part = Rect(at, area.left, size, area.cols)
        _place(child, part, panes, borders, (*path, i))
        offset += size
        if i < last:
            if offset < span and across > 0:  # room for it
                line = start + offset
                if side_by_side:
                    border = Border(area.top, line, across, True, path, i, (start, span))
                else:
                    border = Border(line, area.left, across, False, path, i, (start, span))
                borders.append(border)
            offset += 1


def split_sizes(ratios: tuple[float, ...], span: int) -> list[int]:
    """The cells of each of a split's children along a span of `span` cells, one cell
    between each two going to a border: child i ends at round(avail * (r1 + … + ri))
    (halves up; the ratios normalised to add up to 1 exactly), and gets at least one
    cell, taken from the largest, when avail is at least the number of children."""
    count = len(ratios)
    avail = max(0, span - (count - 1))
    total = math.fsum(ratios)
    ends: list[int] = []
    for i in range(1, count):
        share = math.fsum(ratios[:i]) / total if total > 0 else i / count
        ends.append(min(avail, math.floor(avail * share + 0.5)))
    ends.append(avail)
    result: list[int] = []
    previous = 0
    for end in ends:
        size = max(0, end - previous)  # (never negative: a float's error aside)
        result.append(size)
        previous += size
    if avail >= count:
        for i, size in enumerate(result):
            if size == 0:
                largest = max(range(count), key=lambda j: (result[j], -j))
                result[largest] -= 1
                result[i] = 1
    return result


# -- moving the focus ----------------------------------------------------------------


def neighbour(regions: Regions, pane: int, direction: Side) -> int | None:
    """The pane across the border on `direction`'s side of `pane`: the one overlapping
    it most on the other axis, ties to the top-most (left-most for up and down); None
    at the terminal's edge, for an unknown pane or one with no cells."""
    rect = regions.panes.get(pane)
    if rect is None or _empty(rect):
        return None
    best: tuple[int, int, int] | None = None  # (overlap, -position, pane)
    for other_pane, other in regions.panes.items():
        if other_pane == pane or _empty(other) or not _across(rect, other, direction):
            continue
        if direction in ("left", "right"):
            overlap = _overlap(rect.top, rect.rows, other.top, other.rows)
            position = other.top
        else:
            overlap = _overlap(rect.left, rect.cols, other.left, other.cols)
            position = other.left
        if overlap <= 0:
            continue
        candidate = (overlap, -position, other_pane)
        if best is None or candidate[:2] > best[:2]:
            best = candidate
    return None if best is None else best[2]


def _across(rect: Rect, other: Rect, direction: Side) -> bool:
    """`other`'s edge is one border cell away from `rect`'s on that side."""
    if direction == "right":
        return other.left == rect.left + rect.cols + 1
    if direction == "left":
        return other.left + other.cols + 1 == rect.left
    if direction == "down":
        return other.top == rect.top + rect.rows + 1
    return other.top + other.rows + 1 == rect.top


def _overlap(start: int, length: int, other_start: int, other_length: int) -> int:
    return min(start + length, other_start + other_length) - max(start, other_start)


# -- drawing -----------------------------------------------------------------------

# (up, down, left, right): joined to the line or junction in that neighbouring cell.
_GLYPHS: dict[tuple[bool, bool, bool, bool], str] = {
    (True, True, True, True): "┼",
    (True, True, False, True): "├",
    (True, True, True, False): "┤",
    (False, True, True, True): "┬",
    (True, False, True, True): "┴",
    (False, True, False, True): "┌",
    (False, True, True, False): "┐",
    (True, False, False, True): "└",
    (True, False, True, False): "┘",
}


def border_cells(regions: Regions) -> dict[Cell, str]:
    """Every border cell and the character to draw in it: '│' or '─', or the junction
    joining the lines that meet there ('┼', '├', '┤', '┬', '┴'; a corner only on a
    terminal too small for the tree)."""
    vertical: set[Cell] = set()
    horizontal: set[Cell] = set()
    for border in regions.borders:
        (vertical if border.vertical else horizontal).update(_line(border))
    every = vertical | horizontal
    drawn: dict[Cell, str] = {}
    for cell in every:
        row, col = cell
        above, below, left, right = (row - 1, col), (row + 1, col), (row, col - 1), (row, col + 1)
        if cell in vertical:
            # Its own line goes on up and down, or ends at a line across; a line
            # across meets it from the side.
            joins = (above in every, below in every, left in horizontal, right in horizontal)
        else:
            joins = (above in vertical, below in vertical, left in every, right in every)
        drawn[cell] = _glyph(joins, cell in vertical)
    return drawn


def _glyph(joins: tuple[bool, bool, bool, bool], vertical: bool) -> str:
    if glyph := _GLYPHS.get(joins):
        return glyph
    up, down, left, right = joins
    if (up or down) and not (left or right):
        return VERTICAL_LINE
    if (left or right) and not (up or down):
        return HORIZONTAL_LINE
    return VERTICAL_LINE if vertical else HORIZONTAL_LINE  # alone, or one of each way


def focus_border_cells(regions: Regions, pane: int) -> set[Cell]:
    """The border cells touching `pane`'s rect on its sides, the corners included (the
    frame the client highlights around the focused pane); none for an unknown pane."""
    rect = regions.panes.get(pane)
    if rect is None or _empty(rect):
        return set()
    return {
        (row, col)
        for border in regions.borders
        for row, col in _line(border)
        if rect.top - 1 <= row <= rect.top + rect.rows
        and rect.left - 1 <= col <= rect.left + rect.cols
    }
