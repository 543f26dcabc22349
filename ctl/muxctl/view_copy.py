"""Copy mode in the window view: which pane it covers, the keys it takes, and the paste
buffer (docs/windows.md#copy-mode). It asks muxd for the pane's history when copy mode
starts, and has the window's screen draw it over the pane's region until it ends."""

from collections.abc import Callable
from typing import TYPE_CHECKING

from muxctl.clipboard import PasteBuffer, clipboard_sequence
from muxctl.copy_mode import Copied, CopyMode, ModeKeys
from muxctl.key_reader import KeyReader
from muxctl.window_screen import Cover, WindowScreen

if TYPE_CHECKING:
    from muxctl.client import MuxClient


class ViewCopy:
    def __init__(self, mode_keys: ModeKeys, screen: WindowScreen, buffer: PasteBuffer) -> None:
        self._mode_keys = mode_keys
        self._screen = screen
        self.buffer = buffer  # what `]` pastes
        self.pane: int | None = None  # the pane in copy mode (None: none is)
        self._mode: CopyMode | None = None
        self._reader = KeyReader()

    def start(self, client: "MuxClient", pane: int, size: tuple[int, int], page_up: bool) -> None:
        """Copy mode over `pane` (rows, cols of its region), its history as muxd has it;
        `page_up`: a page up at once (PageUp after the prefix)."""
        (lines,) = client.call("GetHistory", body=[pane, 0])
        self._mode = CopyMode(list(lines), *size, self._mode_keys)
        self.pane = pane
        if page_up:
            self._mode.feed(["PageUp"])
        self._draw()

    def end(self) -> None:
        """Copy mode over (if it was on): the pane's screen shows again."""
        if self.pane is not None:
            self._screen.set_cover(self.pane, None)
        self.pane = self._mode = None

    def fit(self, size_of: Callable[[int], tuple[int, int]]) -> None:
        """To the size of its pane's region (after a new layout or terminal size)."""
        if self._mode is not None and self.pane is not None:
            self._mode.resize(*size_of(self.pane))
            self._draw()

    def type(self, data: bytes) -> bytes:
        """Keys typed in copy mode; what to write to the terminal (OSC 52 with the text
        copied, when copy mode ends with a copy)."""
        if self._mode is None:
            return b""
        ended = self._mode.feed(self._reader.feed(data))
        if ended is None:
            self._draw()
            return b""
        self.end()
        if isinstance(ended, Copied):
            self.buffer.text = ended.text
            return clipboard_sequence(ended.text)
        return b""

    def _draw(self) -> None:
        # Imported once copy mode is used: wcwidth's tables take ~30 ms to load.
        from muxctl import copy_view

        if self._mode is not None and self.pane is not None:
            corner = self._screen.has_corner(self.pane)  # (copy_view.rows)
            cover: Cover = (copy_view.rows(self._mode, corner), copy_view.cursor(self._mode))
            self._screen.set_cover(self.pane, cover)
