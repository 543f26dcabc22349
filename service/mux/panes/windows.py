"""The windows of a pane table: each one's layout tree, title, geometry and focus
(docs/windows.md).

The pane table tells this part of every pane placed and removed; it keeps each
window's tree holding exactly that window's panes (mux.protocol.layout), and tells
its observers of every window added, changed or gone. A client's changes
(`update`) are checked whole against the rules and then made at once, or refused
with nothing changed.

Where a new pane goes when its window exists: a `Placement` says (SplitPane);
without one (Spawn with `window`, a restore, an older muxd's handover) it splits
the window's focused pane along its longer side, on screen — a terminal cell is
about twice as tall as it is wide, so a pane is wider than tall when its columns
are more than twice its rows — in two halves, as zellij does. The new pane takes
the focus, as in tmux.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from mux.panes.handover import WindowRecord
from mux.protocol.errors import InvalidArgument
from mux.protocol.layout import (
    MAX_DEPTH,
    Direction,
    LayoutError,
    Leaf,
    Node,
    check_window_layout,
    depth,
    panes_of,
    parse_layout,
    split_pane,
    to_json,
    without_pane,
)
from mux.protocol.window_options import Geometry, WindowUpdate


@dataclass(slots=True)
class Window:
    id: int
    layout: Node
    focused_pane: int
    title: str = ""
    geometry: Geometry = field(default_factory=dict)

    @property
    def panes(self) -> list[int]:
        return list(panes_of(self.layout))


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a new pane goes: beside `beside`, `direction`, taking `share` of its space."""

    beside: int
    direction: Direction
    share: float


@runtime_checkable
class WindowObserver(Protocol):
    """Hears of every window made, changed or ended. A pane table's observer that is one
    hears of its windows too (PaneTable.add_observer)."""

    def window_added(self, window: Window) -> None: ...
    def window_changed(self, window: Window) -> None: ...
    def window_removed(self, window: Window) -> None: ...


class Windows:
    def __init__(self, size_of: Callable[[int], tuple[int, int]]) -> None:
        """`size_of(pane)`: its (rows, cols), to choose which way to split it."""
        self._size_of = size_of
        self._windows: dict[int, Window] = {}
        self._window_of: dict[int, int] = {}  # pane id -> window id
        self.observers: list[WindowObserver] = []

    def __iter__(self) -> Iterator[Window]:
        return iter(list(self._windows.values()))

    def __len__(self) -> int:
        return len(self._windows)

    def __contains__(self, window_id: int) -> bool:
        return window_id in self._windows

    def get(self, window_id: int) -> Window:
        window = self._windows.get(window_id)
        if window is None:
            raise InvalidArgument(f"there is no window {window_id}")
        return window

    def window_of(self, pane_id: int) -> int | None:
        return self._window_of.get(pane_id)

    # -- the pane table's panes -------------------------------------------------

    def place(self, pane_id: int, window_id: int, placement: Placement | None = None) -> None:
        """A new pane in `window_id` (a new window when there is none of that id)."""
        window = self._windows.get(window_id)
        self._window_of[pane_id] = window_id
        if window is None:
            window = self._windows[window_id] = Window(window_id, Leaf(pane_id), pane_id)
            self._tell(lambda observer: observer.window_added(window))
            return
        placement = placement or self._beside_focus(window)
        window.layout = split_pane(
            window.layout, placement.beside, pane_id, placement.direction, placement.share
        )
        window.focused_pane = pane_id
        self._changed(window)

    def check_room(self, window_id: int, placement: Placement | None = None) -> None:
        """InvalidArgument unless a new pane can go into `window_id` there: a tree may
        nest at most MAX_DEPTH splits (what muxd cannot read back, it does not make)."""
        window = self._windows.get(window_id)
        if window is None:
            return  # a new window
        placement = placement or self._beside_focus(window)
        grown = split_pane(window.layout, placement.beside, 0, placement.direction, 0.5)
        if depth(grown) > MAX_DEPTH:
            raise InvalidArgument(
                f"window {window_id} would nest deeper than {MAX_DEPTH} splits: split "
                "another pane, or the other way"
            )

    def _beside_focus(self, window: Window) -> Placement:
        rows, cols = self._size_of(window.focused_pane)
        direction: Direction = "horizontal" if cols > 2 * rows else "vertical"
        return Placement(window.focused_pane, direction, 0.5)

    def remove(self, pane_id: int) -> None:
        """A pane closed: the space it had goes to its sibling; its window ends with its
        last pane. Its focus goes to the pane before it in the tree (after it, when it
        was the first)."""
        window_id = self._window_of.pop(pane_id, None)
        if window_id is None:
            return
        window = self._windows[window_id]
        order = window.panes
        layout = without_pane(window.layout, pane_id)
        if layout is None:
            del self._windows[window_id]
            self._tell(lambda observer: observer.window_removed(window))
            return
        if window.focused_pane == pane_id:
            at = order.index(pane_id)
            window.focused_pane = order[at - 1] if at > 0 else order[1]
        window.layout = layout
        self._changed(window)

    # -- a client's changes ---------------------------------------------------------

    def update(self, window_id: int, update: WindowUpdate) -> None:
        """Everything checked first (InvalidArgument naming the rule); then all of it
        made at once, with one change told."""
        window = self.get(window_id)
        layout = update.layout if update.layout is not None else window.layout
        focus = update.focused_pane if update.focused_pane is not None else window.focused_pane
        try:
            check_window_layout(layout, window_id, window.panes, focus, self.window_of)
        except LayoutError as e:
            raise InvalidArgument(str(e)) from None
        before = (window.layout, window.focused_pane, window.title, window.geometry)
        window.layout, window.focused_pane = layout, focus
        if update.title is not None:
            window.title = update.title
        if update.geometry is not None:
            window.geometry = dict(update.geometry)
        if (window.layout, window.focused_pane, window.title, window.geometry) != before:
            self._changed(window)

    def remove_observers(self, kind: type) -> None:
        self.observers = [o for o in self.observers if not isinstance(o, kind)]

    def _changed(self, window: Window) -> None:
        self._tell(lambda observer: observer.window_changed(window))

    def _tell(self, what: Callable[[WindowObserver], None]) -> None:
        for observer in list(self.observers):
            what(observer)

    def take_saved(
        self, window_id: int, layout: Node, focused_pane: int, title: str, geometry: Geometry
    ) -> list[int]:
        """A saved window (a restore, a handover) over the panes it has now, placed one
        by one: its saved layout without the panes that did not come back (their space
        to their siblings). Returns those left out. A saved layout that does not name
        every pane the window has now is not taken (the window keeps its own)."""
        window = self.get(window_id)
        present = set(window.panes)
        gone = [pane for pane in panes_of(layout) if pane not in present]
        kept: Node | None = layout
        for pane in gone:
            kept = without_pane(kept, pane) if kept is not None else None
        if kept is None or set(panes_of(kept)) != present:
            kept = window.layout
        focus = focused_pane if focused_pane in present else window.focused_pane
        self.update(window_id, WindowUpdate(title, dict(geometry), kept, focus))
        return gone

    # -- across an upgrade or a crash (mux.panes.handover) ---------------------------

    def records(self) -> list[WindowRecord]:
        return [
            WindowRecord(
                id=window.id,
                title=window.title,
                geometry=dict(window.geometry),
                layout=to_json(window.layout),
                focused_pane=window.focused_pane,
            )
            for window in self._windows.values()
        ]

    def take_records(self, records: list[WindowRecord]) -> None:
        """Once the handed-over panes are placed: their windows as they were."""
        for record in records:
            if record.id in self._windows:
                layout = parse_layout(record.layout)
                self.take_saved(
                    record.id, layout, record.focused_pane, record.title, record.geometry
                )
