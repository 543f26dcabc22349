"""The panes' numbers (`q` behind the prefix, as tmux's display-panes): every pane of
the window shows its index (0, 1, ... in the layout's order) and its id in its middle,
the focused one in red, the others in blue; a digit then focuses the pane of that
index, any other key puts the panes back. Pure: the window's panes in, covers drawn
and the choice out."""

from muxctl.chooser import Chosen
from muxctl.copy_mode import Ended
from muxctl.pane_screen import Cover

FOCUSED, OTHER, RESET = "\x1b[0;1;37;41m", "\x1b[0;1;37;44m", "\x1b[0m"


class PaneNumbers:
    def __init__(self, window: int, panes: list[int], focus: int) -> None:
        """`panes`: the window's, in the layout's order; `focus`: the focused one."""
        self._window = window
        self.panes = panes
        self._focus = focus

    def feed(self, keys: list[str]) -> Chosen | Ended | None:
        """The first key decides: a digit naming a pane chooses it; any other, none."""
        for key in keys:
            if len(key) == 1 and key.isdigit() and int(key) < len(self.panes):
                return Chosen(self._window, self.panes[int(key)])
            return Ended()
        return None

    def cover(self, pane: int, size: tuple[int, int], corner: bool) -> Cover:
        """What `pane`'s region (`size`: rows, cols) shows: its index and id in the
        middle, on the colour of its kind; blank around it. `corner`: the region holds
        the terminal's last cell, which a row must leave out."""
        rows, cols = size
        label = f" {self.panes.index(pane)} · pane {pane} "[:cols]
        middle, left = rows // 2, max(0, (cols - len(label)) // 2)
        colour = FOCUSED if pane == self._focus else OTHER
        drawn = []
        for row in range(rows):
            width = cols - 1 if corner and row == rows - 1 else cols
            if row != middle:
                drawn.append(" " * width)
                continue
            right = max(0, width - left - len(label))
            drawn.append(" " * left + colour + label[: width - left] + RESET + " " * right)
        return drawn, (middle, min(left, max(cols - 1, 0)))

    def resize(self, rows: int, cols: int) -> None:
        """(A new layout or size: the view draws the covers again at the new sizes.)"""
