"""tmux's preset layouts for a window's panes (`Ctrl-b Space`, next-layout; `:select-layout
NAME`), the panes in their order: even-horizontal (side by side), even-vertical (one
above another), main-horizontal (the first on top, half the height, the others side by
side below it), main-vertical (the first on the left, half the width, the others one
above another beside it), tiled (rows of as many as the square root, rounded up).
Pure: pane ids in, a layout tree out."""

import math
from collections.abc import Sequence

from mux.protocol.layout import Direction, Leaf, Node, Split

PRESETS = ("even-horizontal", "even-vertical", "main-horizontal", "main-vertical", "tiled")
MAIN_SHARE = 0.5  # of the window, for the first pane of a main-* layout


def preset_layout(name: str, panes: Sequence[int]) -> Node:
    """The layout `name` (one of PRESETS) of `panes` (at least one)."""
    if len(panes) == 1:
        return Leaf(panes[0])
    first, rest = panes[0], panes[1:]
    if name == "even-horizontal":
        return _even("horizontal", panes)
    if name == "even-vertical":
        return _even("vertical", panes)
    if name == "main-horizontal":
        return _main("vertical", first, _even("horizontal", rest))
    if name == "main-vertical":
        return _main("horizontal", first, _even("vertical", rest))
    across = math.ceil(math.sqrt(len(panes)))
    rows = [panes[at : at + across] for at in range(0, len(panes), across)]
    if len(rows) == 1:
        return _even("horizontal", panes)
    return _split("vertical", [_even("horizontal", row) for row in rows])


def next_preset(last: int | None) -> int:
    """The index in PRESETS after `last` (None: none chosen yet: the first)."""
    return 0 if last is None else (last + 1) % len(PRESETS)


def _even(direction: Direction, panes: Sequence[int]) -> Node:
    return _split(direction, [Leaf(pane) for pane in panes])


def _split(direction: Direction, children: Sequence[Node]) -> Node:
    if len(children) == 1:
        return children[0]
    share = 1 / len(children)
    return Split(direction, tuple(share for _ in children), tuple(children))


def _main(direction: Direction, main: int, others: Node) -> Node:
    return Split(direction, (MAIN_SHARE, 1 - MAIN_SHARE), (Leaf(main), others))
