"""The emulated screen of one pane, behind a small interface so the emulator can be swapped.

Output is fed in batches (never byte by byte in front of clients): callers
append raw bytes with `feed` whenever it suits them, and the decoder keeps
UTF-8 sequences split across reads intact.
"""

import codecs

# avt re-exports Vt without declaring it; its typed home is avt._avt.
from avt._avt import Vt


class Screen:
    __slots__ = ("_decoder", "_vt")

    def __init__(self, rows: int, cols: int) -> None:
        # Scrollback lives in the raw-byte ring (`Scrollback`); emulator lines
        # cost about 2 KiB each, so the emulator keeps only the visible screen.
        self._vt = Vt(cols, rows, scrollback_limit=0)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    @property
    def rows(self) -> int:
        return self._vt.size[1]

    @property
    def cols(self) -> int:
        return self._vt.size[0]

    def feed(self, data: bytes) -> None:
        text = self._decoder.decode(data)
        if text:
            self._vt.feed_str(text)

    def resize(self, rows: int, cols: int) -> None:
        if (cols, rows) != self._vt.size:
            self._vt.resize(cols, rows)

    def lines(self) -> list[str]:
        """The visible screen, one string a row, trailing blanks trimmed."""
        return [line.text.rstrip() for line in self._vt.view()]

    def repaint(self) -> str:
        """Escape sequences that redraw this screen (cursor and colours included)."""
        return self._vt.dump()
