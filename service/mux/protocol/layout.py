"""A window's layout (docs/windows.md#layouts): a tree of splits whose leaves are panes.

The shape is the contract's: a leaf `{"pane": ID}`, or a split `{"split":
"horizontal"|"vertical", "ratios": [r1, …], "children": [node, …]}` ("horizontal":
children side by side; one positive ratio per child, summing to 1 within 0.001; at
least two children). Trees are immutable: a change makes a new tree.

Pure, no I/O: the parsing and its rules, the changes a window makes to its tree (a
pane split, a pane gone, ids remapped at a restore). muxd keeps windows with it;
muxctl reads layouts with it (mux.protocol.regions places them on a terminal).
"""

import json
import math
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

Direction = Literal["horizontal", "vertical"]
DIRECTIONS: tuple[Direction, ...] = ("horizontal", "vertical")
# A split leaves each of its two panes at least this big (a line between them takes
# one more): smaller, a program has no room to draw, and a person typed one split too
# many (seven splits of a 59-column pane once made panes one column wide).
MIN_SPLIT_COLS = 10
MIN_SPLIT_ROWS = 2


def split_room(size: int, direction: Direction, share: float) -> str | None:
    """Why a pane `size` long in `direction` (columns side by side, rows one above the
    other) cannot be split giving the new pane `share` of it; None when it can."""
    least, unit = (
        (MIN_SPLIT_COLS, "columns")
        if direction == "horizontal"
        else (
            MIN_SPLIT_ROWS,
            "rows",
        )
    )
    new = int((size - 1) * share)
    if min(new, size - 1 - new) >= least:
        return None
    return f"it is {size} {unit}: each pane of a split needs at least {least}"


RATIO_TOLERANCE = 0.001
# Deeper than any terminal can show (every split costs a cell): a bound, so that a
# client's tree cannot exhaust the recursion that walks it.
MAX_DEPTH = 200


@dataclass(frozen=True, slots=True)
class Leaf:
    pane: int


@dataclass(frozen=True, slots=True)
class Split:
    direction: Direction
    ratios: tuple[float, ...]
    children: tuple["Node", ...]


Node = Leaf | Split


class LayoutError(ValueError):
    """A layout broken one of the rules; `rule` names it (the message says it too)."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(f"the layout breaks the rule '{rule}': {detail}")
        self.rule = rule


# The rules, by the names their refusals give (docs/windows.md#the-rules).
MALFORMED = "shape"
RATIOS = "ratios"
TWO_CHILDREN = "two children"
PANE_TWICE = "each pane once"
PANE_MISSING = "every pane of the window"
FOREIGN_PANE = "only the window's panes"
FOCUS = "focus in the window"


# -- reading and writing -----------------------------------------------------


def parse_layout(text: str) -> Node:
    """The tree a client sent as JSON; LayoutError for any shape but the contract's."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise LayoutError(MALFORMED, "it is not JSON") from e
    return from_data(data)


def from_data(data: object, depth: int = 0) -> Node:
    if depth > MAX_DEPTH:
        raise LayoutError(MALFORMED, f"it nests deeper than {MAX_DEPTH} splits")
    if not isinstance(data, dict):
        raise LayoutError(MALFORMED, "a node must be an object")
    keys = set(data)
    if keys == {"pane"}:
        return Leaf(_pane_id(data["pane"]))
    if keys != {"split", "ratios", "children"}:
        raise LayoutError(
            MALFORMED,
            'a node is {"pane": ID} or {"split": …, "ratios": […], "children": […]}, '
            f"not one with keys {sorted(keys)}",
        )
    direction = data["split"]
    if direction not in DIRECTIONS:
        raise LayoutError(MALFORMED, f'"split" is "horizontal" or "vertical", not {direction!r}')
    children, ratios = data["children"], data["ratios"]
    if not isinstance(children, list) or not isinstance(ratios, list):
        raise LayoutError(MALFORMED, '"children" and "ratios" must be lists')
    return split_node(
        cast(Direction, direction),
        tuple(_ratio(value) for value in ratios),
        tuple(from_data(child, depth + 1) for child in children),
    )


def _pane_id(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value < 2**64:
        raise LayoutError(MALFORMED, f"a pane id is a positive integer, not {value!r}")
    return value


def _ratio(value: object) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise LayoutError(MALFORMED, f"a ratio is a number, not {value!r}")
    if not 0 < value <= 1:  # (before float(): an integer of 400 digits overflows it)
        raise LayoutError(RATIOS, f"a ratio is a share, above 0 and at most 1, not {value!r:.40}")
    return float(value)


def split_node(
    direction: Direction, ratios: tuple[float, ...], children: tuple[Node, ...]
) -> Split:
    """A split, its own rules checked (two children or more, one ratio each, above 0
    and at most 1, summing to 1)."""
    if len(children) < 2:
        raise LayoutError(TWO_CHILDREN, f"a split has {len(children)} children, not two or more")
    if len(ratios) != len(children):
        raise LayoutError(
            RATIOS, f"a split of {len(children)} children has {len(ratios)} ratios, not one each"
        )
    if not all(math.isfinite(r) and 0 < r <= 1 for r in ratios):
        raise LayoutError(RATIOS, f"ratios are shares, above 0 and at most 1: {list(ratios)}")
    if abs(math.fsum(ratios) - 1) > RATIO_TOLERANCE:
        raise LayoutError(RATIOS, f"ratios add up to {math.fsum(ratios):g}, not 1")
    return Split(direction, ratios, children)


def to_data(node: Node) -> dict[str, Any]:
    if isinstance(node, Leaf):
        return {"pane": node.pane}
    return {
        "split": node.direction,
        "ratios": list(node.ratios),
        "children": [to_data(child) for child in node.children],
    }


def to_json(node: Node) -> str:
    return json.dumps(to_data(node), separators=(",", ":"))


# -- the window's rules --------------------------------------------------------


def panes_of(node: Node) -> Iterator[int]:
    """The panes, in tree order (left to right, top to bottom)."""
    if isinstance(node, Leaf):
        yield node.pane
        return
    for child in node.children:
        yield from panes_of(child)


def check_window_layout(
    node: Node,
    window: int,
    window_panes: Collection[int],
    focus: int,
    window_of: Callable[[int], int | None],
) -> None:
    """`node` holds exactly `window_panes`, each once, and `focus` is one of them;
    `window_of(pane)`: the window of another pane, None for no such pane."""
    seen: set[int] = set()
    for pane in panes_of(node):
        if pane in seen:
            raise LayoutError(PANE_TWICE, f"pane {pane} appears twice")
        seen.add(pane)
        if pane not in window_panes:
            other = window_of(pane)
            where = f"is in window {other}" if other is not None else "does not exist"
            raise LayoutError(FOREIGN_PANE, f"pane {pane} {where}, not in window {window}")
    if missing := sorted(set(window_panes) - seen):
        raise LayoutError(PANE_MISSING, f"pane {missing[0]} of window {window} is not in it")
    if focus not in seen:
        raise LayoutError(FOCUS, f"the focused pane {focus} is not one of window {window}'s")


# -- changes ---------------------------------------------------------------------


def split_pane(node: Node, target: int, new: int, direction: Direction, share: float) -> Node:
    """`new` beside `target` (right of it, or below), taking `share` of its space (0 <
    share < 1): in `target`'s split when that one runs the same way (no nesting: a pane
    split again and again the same way lines up, as in tmux), else in a split of two
    in `target`'s place."""
    if not 0 < share < 1:
        raise LayoutError(RATIOS, f"a new pane's share is between 0 and 1, not {share:g}")
    if isinstance(node, Leaf):
        if node.pane != target:
            return node
        return Split(direction, (1 - share, share), (node, Leaf(new)))
    if node.direction == direction:
        for at, child in enumerate(node.children):
            if child == Leaf(target):
                ratio = node.ratios[at]
                ratios = (*node.ratios[:at], ratio * (1 - share), ratio * share)
                children = (*node.children[: at + 1], Leaf(new))
                return Split(
                    direction,
                    ratios + node.ratios[at + 1 :],
                    children + node.children[at + 1 :],
                )
    return Split(
        node.direction,
        node.ratios,
        tuple(split_pane(child, target, new, direction, share) for child in node.children),
    )


def depth(node: Node) -> int:
    """How many splits deep the tree goes (0: a pane alone)."""
    if isinstance(node, Leaf):
        return 0
    return 1 + max(depth(child) for child in node.children)


def without_pane(node: Node, pane: int) -> Node | None:
    """The tree without `pane`'s leaf (None: it was the last). The space goes to the
    sibling before it (after it, when it was first), as in tmux; a split left with one
    child is replaced by that child."""
    if isinstance(node, Leaf):
        return None if node.pane == pane else node
    children: list[Node] = []
    ratios: list[float] = []
    freed: tuple[int, float] | None = None  # (where the leaf was, its share)
    for child, ratio in zip(node.children, node.ratios, strict=True):
        kept = without_pane(child, pane)
        if kept is None:
            freed = (len(children), ratio)
            continue
        children.append(kept)
        ratios.append(ratio)
    if freed is not None:
        where, share = freed
        ratios[max(0, where - 1)] += share
    if len(children) == 1:
        return children[0]
    return Split(node.direction, tuple(ratios), tuple(children))


def with_panes_renamed(node: Node, renamed: Mapping[int, int]) -> Node:
    """The same tree, each pane `p` now `renamed[p]` (a restore's new ids)."""
    if isinstance(node, Leaf):
        return Leaf(renamed[node.pane])
    return Split(
        node.direction,
        node.ratios,
        tuple(with_panes_renamed(child, renamed) for child in node.children),
    )


MIN_RATIO = 0.02  # a border moved never leaves a pane of a split less than this of it


def move_border(node: Node, pane: int, way: str, cells: int, size: int) -> Node | None:
    """The tree with `pane` grown `cells` that way ("left", "right", "up", "down"), as
    tmux's resize-pane: the border on that side moves that way; with no pane beyond it,
    the border on the other side does (the pane shrinks). `size`: the pane's columns (or
    rows) now, which turn cells into a share of its split. None when no border of its
    can move that way, or that far."""
    axis: Direction = "horizontal" if way in ("left", "right") else "vertical"
    forward = way in ("right", "down")

    def walk(node: Node) -> tuple[Node, bool]:
        if isinstance(node, Leaf):
            return node, False
        at = next(i for i, child in enumerate(node.children) if pane in panes_of(child))
        inner, moved = walk(node.children[at])
        children = (*node.children[:at], inner, *node.children[at + 1 :])
        ratios = list(node.ratios)
        if not moved and node.direction == axis and len(children) > 1:
            beyond = at + 1 if forward else at - 1
            grows = 0 <= beyond < len(children)
            other = beyond if grows else (at - 1 if forward else at + 1)
            step = ratios[at] * cells / max(size, 1) * (1 if grows else -1)
            ratios[at] += step
            ratios[other] -= step
            if min(ratios[at], ratios[other]) < MIN_RATIO:
                raise _TooFar
            moved = True
        return Split(node.direction, tuple(ratios), children), moved

    if pane not in panes_of(node) or cells <= 0:
        return None
    try:
        moved_tree, moved = walk(node)
    except _TooFar:
        return None
    return moved_tree if moved else None


class _TooFar(Exception):
    """A border would go past the pane beyond it."""
