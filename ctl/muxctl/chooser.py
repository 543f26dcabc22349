"""The window view's chooser (`w` behind the prefix, as tmux's choose-tree): every
window, and under it each of its panes with its title and directory, one to pick.
Pure: what ListWindows and ListPanes said in, key names in (muxctl.key_reader), the
rows drawn and the choice out. Shown over the focused pane's region, as copy mode is.

Up and Down (or `k` `j`, `C-p` `C-n`) move, Enter shows the window and focuses the
pane chosen, a digit shows the window of that index at once, `q`, Escape or `C-c`
leave. The same list, with nothing to pick, shows the keys (`?`: `listing`).
Everything written from a title, a program or a directory goes through `visible`: no
control character of theirs reaches the terminal.
"""

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mux.protocol.layout import panes_of
from mux.protocol.visible import visible
from muxctl.copy_mode import Ended
from muxctl.status_line import ended, fit, program_name, shorter_path, window_name
from muxctl.window_commands import layout_of

SELECTED = "\x1b[0;7m"
RESET = "\x1b[0m"
_MOVES = {"Up": -1, "k": -1, "C-p": -1, "Down": 1, "j": 1, "C-n": 1}


@dataclass(frozen=True)
class Choice:
    window: int
    pane: int  # focused when chosen
    text: str


@dataclass(frozen=True)
class Chosen:
    """The chooser ended with `window` to show, `pane` focused in it."""

    window: int
    pane: int


def choices(
    windows: Sequence[Mapping[str, Any]], panes: Sequence[Mapping[str, Any]]
) -> list[Choice]:
    """A line for each window (`(0) 0: build · 2 panes`), then one for each of its panes
    (`├─ 3: vim · ~/src`); plain values, as status_line takes them."""
    home = os.environ.get("HOME")
    by_id = {int(pane["id"]): pane for pane in panes}
    lines = []
    for index, window in enumerate(sorted(windows, key=lambda w: int(w["id"]))):
        ids = list(panes_of(layout_of(window)))
        name = visible(str(window.get("title") or "")) or window_name(window, panes)
        count = f"{len(ids)} pane{'s' if len(ids) != 1 else ''}"
        focused = int(window.get("focused_pane") or 0)
        lines.append(Choice(int(window["id"]), focused, f"({index}) {name} · {count}"))
        for at, pane_id in enumerate(ids):
            pane = by_id.get(pane_id, {"id": pane_id})
            title = visible(str(pane.get("title") or "")) or program_name(pane)
            where = shorter_path(visible(str(pane.get("cwd") or "")), home)
            branch = "└─" if at == len(ids) - 1 else "├─"
            lines.append(
                Choice(
                    int(window["id"]),
                    pane_id,
                    f"    {branch} {pane_id}: {title} · {where}{ended(pane)}",
                )
            )
    return lines


def listing(texts: list[str]) -> list[Choice]:
    """Lines only to read (the keys, for `?`): a Chooser of them picks nothing."""
    return [Choice(0, 0, text) for text in texts]


class Chooser:
    def __init__(self, lines: list[Choice], current: tuple[int, int], rows: int, cols: int) -> None:
        """`current`: the (window, pane) shown now, selected to start with. Lines of
        `listing` are only read: Enter leaves, as `q` does."""
        self.lines = lines
        self._picks = any(line.window for line in lines)
        self.rows, self.cols = max(1, rows), max(1, cols)
        here = [at for at, c in enumerate(lines) if (c.window, c.pane) == current]
        self.selected = here[-1] if here else 0
        self.top = 0
        self._show()

    def resize(self, rows: int, cols: int) -> None:
        self.rows, self.cols = max(1, rows), max(1, cols)
        self._show()

    def feed(self, keys: list[str]) -> Chosen | Ended | None:
        for key in keys:
            if key in ("q", "Escape", "C-c", "C-g") or (key == "Enter" and not self._picks):
                return Ended()
            if key == "Enter" and self.lines:
                choice = self.lines[self.selected]
                return Chosen(choice.window, choice.pane)
            if key.isdigit() and len(key) == 1 and self._picks:
                heads = [c for c in self.lines if c.text.startswith(f"({key}) ")]
                if heads:
                    return Chosen(heads[0].window, heads[0].pane)
            if key in _MOVES and self.lines:
                self.selected = (self.selected + _MOVES[key]) % len(self.lines)
                self._show()
        return None

    def _show(self) -> None:
        if self.selected < self.top:
            self.top = self.selected
        elif self.selected >= self.top + self.rows:
            self.top = self.selected - self.rows + 1

    def drawn(self, corner: bool) -> tuple[list[str], tuple[int, int]]:
        """The rows (as wide as the region; the last one a cell narrower at the
        terminal's corner), and the cursor: on the line selected."""
        rows = []
        for row in range(self.rows):
            width = self.cols - 1 if corner and row == self.rows - 1 else self.cols
            at = self.top + row
            text = fit(self.lines[at].text, width) if at < len(self.lines) else " " * width
            rows.append(f"{SELECTED}{text}{RESET}" if at == self.selected else text)
        return rows, (self.selected - self.top, 0)
