"""What the window view shows (docs/windows.md#the-window-view): the window, its layout
and focused pane as muxd last said, the view's own zoom and last window, and the
regions the layout takes on the terminal. Shared by the view, its commands and its
mouse; no I/O."""

from dataclasses import dataclass, field

from mux.protocol.layout import Node
from mux.protocol.regions import Regions


@dataclass
class Shown:
    size: tuple[int, int]  # the terminal's (rows, cols)
    window: int = 0  # 0: not known yet (the pane asked for is being attached)
    layout: Node | None = None
    focus: int = 0  # the window's focused pane, as muxd has it
    zoomed: int | None = None  # the pane filling the view (the view's own, not muxd's)
    last_window: int | None = None  # the one shown before (`l`)
    last_focus: int | None = None  # the pane of this window focused before (`;`)
    regions: Regions | None = field(default=None, repr=False)
    status_parts: list[tuple[int, str]] = field(default_factory=list)  # (a click's)

    @property
    def pane(self) -> int:
        """The pane keys go to: the zoomed one, else the focused one."""
        return self.zoomed or self.focus

    def follow(self, window: int, layout: Node, focus: int) -> None:
        """The window as muxd says it is now; a focus moved within it is remembered."""
        if window != self.window:
            self.last_focus = None
        else:
            self.focus_on(focus)
        self.window, self.layout, self.focus = window, layout, focus

    def focus_on(self, pane: int) -> None:
        """`pane` focused, the one focused before remembered (`;`)."""
        if pane != self.focus and self.focus:
            self.last_focus = self.focus
        self.focus = pane

    def size_of(self, pane: int) -> tuple[int, int]:
        """The size of `pane`'s region (the terminal's, before there are regions)."""
        rect = self.regions.panes.get(pane) if self.regions is not None else None
        return (max(1, rect.rows), max(1, rect.cols)) if rect is not None else self.size
