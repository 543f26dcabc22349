"""A border between panes dragged with the mouse (docs/windows.md#the-mouse): which
border is under a cell, and the layout with it moved to another line. Only the two
panes on either side of it change size, as when tmux drags a border. Pure, no I/O."""

from mux.protocol.layout import Node, Split
from mux.protocol.regions import Border, Cell, Regions, split_sizes


def border_under(regions: Regions, cell: Cell) -> Border | None:
    """The border line that `cell` (row, column) is on; None when it is on none. Where
    two lines cross, the one across the other (the inner split's) is taken."""
    row, col = cell
    found: Border | None = None
    for border in regions.borders:
        along, across = (row, col) if border.vertical else (col, row)
        first = border.top if border.vertical else border.left
        line = border.left if border.vertical else border.top
        on_it = across == line and first <= along < first + border.length
        if on_it and (found is None or len(border.split) > len(found.split)):
            found = border
    return found


def dragged(layout: Node, border: Border, to: int) -> Node | None:
    """`layout` with `border` moved to line `to` (a column for a vertical border, a row
    for a horizontal one), as near as the panes on either side keep one cell each.
    None when it stays where it is (or the layout has changed since)."""
    split = _at(layout, border.split)
    if split is None or border.after + 1 >= len(split.children):
        return None
    start, span = border.span
    sizes = split_sizes(split.ratios, span)
    count = len(sizes)
    avail = max(1, span - (count - 1))
    before = sum(sizes[: border.after])  # the cells of the children before the two
    pair = sizes[border.after] + sizes[border.after + 1]
    if pair < 2:
        return None
    # The border after child i is at start + (its end) + i (one cell per border before).
    end = min(max(to - start - border.after, before + 1), before + pair - 1)
    if end == before + sizes[border.after]:
        return None
    # Every child's share is set to the cells it has now (the two beside the border:
    # the cells they are to have), so the rounding puts the border exactly there.
    cells = list(sizes)
    cells[border.after], cells[border.after + 1] = end - before, before + pair - end
    if min(cells) < 1:
        return None  # (a terminal too small for the tree: no share may be 0)
    ratios = tuple(size / avail for size in cells)
    return _replaced(layout, border.split, Split(split.direction, ratios, split.children))


def _at(node: Node, path: tuple[int, ...]) -> Split | None:
    for step in path:
        if not isinstance(node, Split) or step >= len(node.children):
            return None
        node = node.children[step]
    return node if isinstance(node, Split) else None


def _replaced(node: Node, path: tuple[int, ...], new: Split) -> Node:
    if not path or not isinstance(node, Split):
        return new
    step, rest = path[0], path[1:]
    children = list(node.children)
    children[step] = _replaced(children[step], rest, new)
    return Split(node.direction, node.ratios, tuple(children))
