"""The window view's commands (docs/windows.md#the-window-view): what a key after the
prefix does. muxd does most (a split, a close, a new window, a switch, a rename, the
focus) and the view follows what ListWindows then says; zoom, the copy mode and the
chooser are the view's own."""

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mux.protocol.border_drag import dragged
from mux.protocol.layout import panes_of
from mux.protocol.regions import Border, Side, neighbour
from muxctl.chooser import Chosen
from muxctl.errors import CtlError, RemoteError
from muxctl.layout_presets import PRESETS, next_preset, preset_layout
from muxctl.pane_links import PaneLinks
from muxctl.prefix_keys import WINDOW_SWITCHES
from muxctl.typed_commands import NotACommand, typed_command
from muxctl.view_copy import PANE_MODES, ViewCopy
from muxctl.view_question import Asked
from muxctl.view_state import Shown
from muxctl.window_commands import (
    ASKS_FIRST,
    RESIZE_CELLS,
    asks_first,
    carry_out,
    resize_pane,
    set_focus,
    set_layout,
    swap_pane,
    window_ids,
)

if TYPE_CHECKING:
    from muxctl.client import MuxClient

# What a read-only view may do: its own (zoom, copy mode, the chooser) and which window
# it shows; nothing that changes a pane or the window, nor the focus (muxd's).
WATCHING = PANE_MODES | {"zoom", "command-prompt", "display-panes"} | WINDOW_SWITCHES
DIRECTIONS: dict[str, Side] = {"up": "up", "down": "down", "left": "left", "right": "right"}


@dataclass(frozen=True)
class Done:
    """What came of a command, for the view to show: the bell (refused), another window
    (drawn from scratch), a question to ask first (the command again with its answer),
    or detach (typed after `:`)."""

    bell: bool = False
    other_window: bool = False
    ask: Asked | None = None
    detach: bool = False


class ViewCommands:
    def __init__(self, client: "MuxClient", shown: Shown, copy: ViewCopy, links: PaneLinks) -> None:
        self._client = client
        self._shown = shown
        self._copy = copy
        self._links = links
        self._presets: dict[int, int] = {}  # each window's preset layout chosen last

    def do(self, name: str, answer: str | None = None) -> Done:
        """Command `name` (a value of [keys]) on the pane keys go to; `answer`: what was
        answered to the question it asked first. A refusal of muxd's rings the bell."""
        shown = self._shown
        if shown.window == 0:
            return Done()  # (the window is not known yet)
        if self._links.read_only and name not in WATCHING:
            return Done(bell=True)
        self._copy.end()  # (another command ends copy mode)
        try:
            return self._do(name, answer, shown.pane)
        except (RemoteError, CtlError):
            return Done(bell=True)

    def choose(self, chosen: Chosen) -> Done:
        """What the chooser chose: that pane focused, its window shown (read-only: the
        window, as it is focused)."""
        if self._links.read_only:
            return self._show(chosen.window, 0)
        try:
            set_focus(self._client, chosen.window, chosen.pane)
        except (RemoteError, CtlError):
            return Done(bell=True)
        return self._show(chosen.window, chosen.pane)

    def show_window(self, window: int) -> Done:
        """Window `window` shown (a click on it in the status line), as it is focused."""
        if window == self._shown.window:
            return Done()
        self._copy.end()
        return self._show(window, 0)

    def focus(self, pane: int) -> Done:
        """`pane` of the window shown takes the focus (a click on it); a mode over
        another pane ends."""
        shown = self._shown
        if pane == shown.pane or self._links.read_only:
            return Done()
        self._copy.end()
        try:
            set_focus(self._client, shown.window, pane)
        except (RemoteError, CtlError):
            return Done(bell=True)
        shown.focus_on(pane)  # (before ListWindows says so: the next event may need it)
        return Done()

    def scroll_back(self, pane: int, lines: int) -> Done:
        """The wheel up over `pane`, not in copy mode: it takes the focus, and copy mode
        starts there scrolled `lines` up, to end when scrolled back down (tmux's)."""
        done = self.focus(pane)
        if done.bell or pane != self._shown.pane:  # (a watcher scrolls the focused one)
            return done
        shown = self._shown
        try:
            here, size = (shown.window, pane), shown.size_of(pane)
            self._copy.start(self._client, "copy-mode", here, size, by_wheel=True)
        except (RemoteError, CtlError):
            return Done(bell=True)
        self._copy.wheel(-lines)
        return Done()

    def drag(self, border: Border, to: int) -> Done:
        """`border` dragged to line `to` (its column, or row): the split's ratios set."""
        shown = self._shown
        if self._links.read_only:
            return Done()
        moved = dragged(shown.layout, border, to) if shown.layout is not None else None
        if moved is None:
            return Done()
        try:
            set_layout(self._client, shown.window, moved)
        except (RemoteError, CtlError):
            return Done(bell=True)
        return Done()

    def _typed(self, line: str, pane: int) -> Done:
        """The command typed after `:` (muxctl.typed_commands), done as its key does it."""
        try:
            typed = typed_command(line)
        except NotACommand as e:
            return Done(ask=Asked(str(e), notice=True))  # (the overlay escapes it)
        if typed is None:
            return Done()
        if typed.name == "detach":
            return Done(detach=True)
        if self._links.read_only and typed.name not in WATCHING:
            return Done(bell=True)
        return self._do(typed.name, typed.answer, pane)

    def _do(self, name: str, answer: str | None, pane: int) -> Done:
        shown, client = self._shown, self._client
        if name == "command-prompt" and answer is not None:
            return self._typed(answer, pane)
        if name in PANE_MODES:
            self._copy.start(client, name, (shown.window, pane), shown.size_of(pane))
        elif name == "paste" and (link := self._links.get(pane)) is not None:
            link.paste(self._copy.buffer.text)
        elif name in DIRECTIONS and shown.regions is not None:
            to = neighbour(shown.regions, pane, DIRECTIONS[name])
            if shown.zoomed is None and to is not None:
                set_focus(client, shown.window, to)
        elif name in ("next-pane", "last-pane") and shown.layout is not None:
            ids = list(panes_of(shown.layout))
            if name == "next-pane":
                pick: int | None = ids[(ids.index(pane) + 1) % len(ids)] if pane in ids else None
            else:  # (as tmux's `;`: none, or gone, is said with the bell)
                pick = shown.last_focus if shown.last_focus in ids else None
                if pick is None:
                    return Done(bell=True)
            if pick is not None and pick != pane:
                shown.zoomed = None  # (tmux's select-pane unzooms too)
                set_focus(client, shown.window, pick)
                shown.focus_on(pick)
        elif name in ("next-layout", "select-layout") and shown.layout is not None:
            ids = list(panes_of(shown.layout))
            chosen = PRESETS.index(answer) if answer in PRESETS else None
            if chosen is None:  # (next-layout: the one after the last chosen here)
                chosen = next_preset(self._presets.get(shown.window))
            self._presets[shown.window] = chosen
            shown.zoomed = None
            set_layout(client, shown.window, preset_layout(PRESETS[chosen], ids))
        elif name.startswith("swap-pane-") and shown.layout is not None:
            shown.zoomed = None  # (as tmux's swap-pane)
            swap_pane(client, shown.window, shown.layout, pane, name == "swap-pane-down")
        elif name == "display-panes" and shown.layout is not None and shown.zoomed is None:
            self._copy.number(shown.window, list(panes_of(shown.layout)), pane, shown.size_of)
        elif name == "zoom":
            shown.zoomed = None if shown.zoomed is not None else pane
        elif name.startswith("resize-") and shown.layout is not None:
            side = name.removeprefix("resize-")
            size = shown.size_of(pane)[1 if side in ("left", "right") else 0]
            cells = int(answer) if answer else RESIZE_CELLS  # (resize-pane -L N typed)
            resize_pane(client, shown.window, shown.layout, pane, side=side, size=size, cells=cells)
        elif (
            name in ASKS_FIRST
            and answer is None
            and (asked := asks_first(client, name, shown.window, pane))
        ):
            return Done(ask=asked)
        else:  # muxd's to do; the view shows what comes of it
            shown.zoomed = None
            said = answer or ""
            other = carry_out(client, name, shown.window, pane, shown.last_window, answer=said)
            if other is not None:
                return self._show(*other)
        return Done()

    def window_gone(self) -> bool:
        """The window shown has ended (its last pane closed): as tmux, the one shown
        before it is shown instead, else the one before it in the list, else the first;
        False when no window is left."""
        shown = self._shown
        ids = window_ids(self._client)
        if not ids:
            return False
        earlier = max((w for w in ids if w < shown.window), default=ids[0])
        self._show(shown.last_window if shown.last_window in ids else earlier, 0)
        shown.last_window = None  # (the one gone)
        return True

    def _show(self, window: int, pane: int) -> Done:
        """Another window from now on: `window` (0: the one of `pane`), `pane` focused (0:
        its focused one)."""
        shown = self._shown
        shown.last_window, shown.window, shown.focus = shown.window, window, pane
        shown.last_focus = None
        shown.zoomed = None
        return Done(other_window=True)
