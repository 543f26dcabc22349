"""The modes of the window view that take the focused pane's region and its keys: copy
mode (docs/windows.md#copy-mode), with the paste buffer, and the chooser
(docs/windows.md#the-window-view, `w`), which also lists the keys (`?`); and the
panes' numbers (`q`), over every pane of the window. Each starts from what muxd says
(the pane's history; the windows and panes), and has the window's screen draw it over
the pane's region until it ends."""

from collections.abc import Callable
from typing import TYPE_CHECKING

from muxctl.chooser import Chooser, Chosen, choices, listing
from muxctl.clipboard import PasteBuffer, clipboard_sequence
from muxctl.copy_mode import Copied, CopyMode, ModeKeys
from muxctl.key_reader import KeyReader
from muxctl.pane_numbers import PaneNumbers
from muxctl.pane_screen import Cover
from muxctl.window_commands import plain_entries
from muxctl.window_screen import WindowScreen

if TYPE_CHECKING:
    from muxctl.client import MuxClient

# The commands that start a mode here: copy mode (PageUp: a page up at once), the chooser,
# the list of the keys.
PANE_MODES = frozenset({"copy-mode", "copy-mode-page-up", "choose-tree", "list-keys"})


class ViewCopy:
    def __init__(
        self, mode_keys: ModeKeys, screen: WindowScreen, buffer: PasteBuffer, keys: list[str]
    ) -> None:
        """`keys`: the keys bound, a line each, as `?` lists them."""
        self._mode_keys = mode_keys
        self._keys = keys
        self._screen = screen
        self.buffer = buffer  # what `]` pastes
        self.pane: int | None = None  # the pane a mode covers (None: none does)
        self._mode: CopyMode | Chooser | PaneNumbers | None = None
        self._size_of: Callable[[int], tuple[int, int]] = lambda pane: (1, 1)
        self._reader = KeyReader()
        self._chosen: Chosen | None = None
        self._wheeled = False  # copy mode started by the wheel: ends back at the bottom

    def start(
        self,
        client: "MuxClient",
        command: str,
        shown: tuple[int, int],
        size: tuple[int, int],
        *,
        by_wheel: bool = False,
    ) -> None:
        """The mode of `command` (one of PANE_MODES) over the pane of `shown` (window,
        pane), whose region is `size` (rows, cols). Copy mode `by_wheel` ends when the
        wheel scrolls it back to the bottom (tmux's `copy-mode -e`)."""
        pane = shown[1]
        if command == "choose-tree":
            windows, panes = (plain_entries(client, m) for m in ("ListWindows", "ListPanes"))
            self._mode = Chooser(choices(windows, panes), shown, *size)
        elif command == "list-keys":
            self._mode = Chooser(listing(self._keys), shown, *size)
        else:
            (lines,) = client.call("GetHistory", body=[pane, 0])
            self._mode = CopyMode(list(lines), *size, self._mode_keys)
            if command == "copy-mode-page-up":
                self._mode.feed(["PageUp"])
        self.pane = pane
        self._wheeled = by_wheel
        self._draw()

    def number(
        self, window: int, panes: list[int], focus: int, size_of: Callable[[int], tuple[int, int]]
    ) -> None:
        """The panes' numbers over every pane of `window` (`panes`, in the layout's
        order; `size_of` their regions' sizes) until a key."""
        self._mode, self._size_of = PaneNumbers(window, panes, focus), size_of
        self.pane, self._wheeled = focus, False
        self._draw()

    def wheel(self, lines: int) -> None:
        """The mouse wheel over the mode's pane: copy mode scrolls `lines` (up when
        negative); the chooser takes no wheel."""
        if isinstance(self._mode, CopyMode):
            self._mode.scroll(lines)
            if self._wheeled and lines > 0 and self._mode.top == self._mode.bottom_top:
                self.end()
            else:
                self._draw()

    def end(self) -> None:
        """The mode over (if one was on): the pane's screen shows again."""
        covered = self._mode.panes if isinstance(self._mode, PaneNumbers) else [self.pane]
        for pane in covered:
            if pane is not None:
                self._screen.set_cover(pane, None)
        self.pane = self._mode = None

    def fit(self, size_of: Callable[[int], tuple[int, int]]) -> None:
        """To the size of its pane's region (after a new layout or terminal size)."""
        self._size_of = size_of
        if self._mode is not None and self.pane is not None:
            self._mode.resize(*size_of(self.pane))
            self._draw()

    def type(self, data: bytes) -> bytes:
        """Keys typed in the mode; what to write to the terminal (OSC 52 with the text
        copied, when copy mode ends with a copy)."""
        if self._mode is None:
            return b""
        ended = self._mode.feed(self._reader.feed(data))
        if ended is None:
            self._draw()
            return b""
        self.end()
        if isinstance(ended, Chosen):
            self._chosen = ended
        if isinstance(ended, Copied):
            self.buffer.text = ended.text
            return clipboard_sequence(ended.text)
        return b""

    def take_chosen(self) -> Chosen | None:
        """What the chooser chose (once), if it ended so."""
        chosen, self._chosen = self._chosen, None
        return chosen

    def _draw(self) -> None:
        # Imported once copy mode is used: wcwidth's tables take ~30 ms to load.
        from muxctl import copy_view

        if self._mode is None or self.pane is None:
            return
        if isinstance(self._mode, PaneNumbers):
            for pane in self._mode.panes:
                corner = self._screen.has_corner(pane)
                self._screen.set_cover(pane, self._mode.cover(pane, self._size_of(pane), corner))
            return
        corner = self._screen.has_corner(self.pane)  # (its last cell is never drawn)
        cover: Cover
        if isinstance(self._mode, Chooser):
            cover = self._mode.drawn(corner)
        else:
            cover = (copy_view.rows(self._mode, corner), copy_view.cursor(self._mode))
        self._screen.set_cover(self.pane, cover)
