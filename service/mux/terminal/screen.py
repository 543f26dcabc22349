"""The emulated screen of one pane, behind a small interface so the emulator can be swapped.

Output is fed in batches (never byte by byte in front of clients): callers
append raw bytes with `feed` whenever it suits them, and the decoder keeps
UTF-8 sequences split across reads intact.

An emulator costs about 94 KiB for 80x24, so a screen only has one while it
is used: it is created on first use, and `hibernate` replaces it with the
escape sequences that recreate it (`dump`, a few KiB), fed into a fresh
emulator on the next use. `last_used` counts clients' reads and resizes only,
so a program that keeps printing does not keep its emulator alive. avt's
dump reproduces the whole state (cursor, pen, modes, scroll region,
charsets, alternate screen), so nothing is lost.
"""

import codecs
import logging
import re
import time
from collections.abc import Callable
from typing import TypeVar

# avt re-exports Vt without declaring it; its typed home is avt._avt.
from avt._avt import Vt

from mux.protocol.combining import composed
from mux.protocol.dec_graphics import GraphicsTranslator
from mux.terminal.fast_forward import ends_in_ground, jump, skippable

log = logging.getLogger(__name__)

T = TypeVar("T")

FEED_SLICE_CHARS = 16384
# Lines above the screen an emulator keeps for a resize (see `_emulator`): a 1000-row
# screen keeps 100 (+10 % of its memory), not 1000 (+100 %: the cells budget would lie).
REWRAP_LINES = 100

# avt's dump assumes a blank terminal in its initial state. Leave the alternate
# screen (1047: without restoring a saved cursor), reset the pen, the scroll
# region, origin/insert/wrap modes, cursor visibility, cursor-key and keypad
# modes and the G0 charset, then clear and home. Mouse reporting, bracketed
# paste and focus events, which avt does not track, the pane adds itself
# (mux.protocol.modes).
REPAINT_RESET = (
    "\x1b[?1047l\x1b[0m\x1b[r\x1b[?6l\x1b[4l\x1b[?7h\x1b[?25h\x1b[?1l\x1b>\x1b(B\x1b[H\x1b[2J"
)

# avt's dump repeats a cell's character with REP (`CSI n b`, after that character). Not
# every terminal repeats what it was not asked to (tmux repeats only ASCII; others none
# at all), so what a client is sent spells every character out. The character is one
# code point (avt writes a cell's base character), `n` at most a row's width.
_REPEATED = re.compile(r"(.)(?:\x1b\[|\x9b)(\d{1,5})b", re.DOTALL)

# A scroll region in avt's dump (`CSI top;bottom r`; the dump writes CSI as U+009B).
_SCROLL_REGION = re.compile(r"\x9b\d*;\d*r")
# The end of avt's dump: the origin mode and the scroll region when set, then the
# cursor's position (the last CUP), and after it what puts back the pen, the
# character sets and the modes (and the last character again when a wrap is pending).
_CURSOR_STATE = re.compile(
    r"(?:\x9b\?6h)?(?:\x9b\d+;\d+r)?\x9b\d+;\d+H(?!.*\x9b\d+;\d+H)", re.DOTALL
)

# avt reports its internal failures as Rust panics, which reach Python as
# pyo3's PanicException: a BaseException. Only these pass through untouched.
_CONTROL_FLOW = (KeyboardInterrupt, SystemExit, GeneratorExit)


def _emulator(cols: int, rows: int) -> Vt:
    """An emulator of the screen, and of as many lines above it as it has rows (at most
    REWRAP_LINES): the history is the raw-byte ring's (`Scrollback`), and an emulator
    line costs ~2 KiB at 80 columns, but a resize re-wraps what is on the screen and
    what just left it (a line wrapped in a narrowed pane comes back whole when it is
    widened), and a screen grown taller shows the lines above it again, as tmux does.
    (What a hibernated screen's dump holds is the screen only: after it wakes, the
    lines above it are those printed since.)"""
    return Vt(cols, rows, scrollback_limit=min(rows, REWRAP_LINES))


def _feed_in_slices(vt: Vt, text: str) -> None:
    for start in range(0, len(text), FEED_SLICE_CHARS):
        vt.feed_str(text[start : start + FEED_SLICE_CHARS])


class Screen:
    __slots__ = (
        "_cols",
        "_decoder",
        "_dump",
        "_graphics",
        "_ground",
        "_rows",
        "_vt",
        "last_used",
    )

    def __init__(self, rows: int, cols: int) -> None:
        self._rows = rows
        self._cols = cols
        self._vt: Vt | None = None
        self._dump = ""  # the state while hibernating; "" is a blank screen
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._graphics = GraphicsTranslator()  # xterm's DEC special graphics glyphs
        self._ground = True  # the emulator's parser is known to be in its ground state
        self.last_used = time.monotonic()  # by a client; output does not count

    @property
    def rows(self) -> int:
        return self._rows

    @property
    def cols(self) -> int:
        return self._cols

    @property
    def is_live(self) -> bool:
        return self._vt is not None

    def _live(self) -> Vt:
        vt = self._vt
        if vt is None:
            vt = self._vt = _emulator(self._cols, self._rows)
            if self._dump:
                vt.feed_str(self._dump)
                self._dump = ""
        return vt

    def _guarded(self, operation: Callable[[Vt], T], fallback: Callable[[], T]) -> T:
        """Run an emulator operation; if the emulator fails, start a blank one.

        What a program prints (or a client asks) must never take the service
        down or leave a pane's screen half-updated: the screen is lost, the
        pane and its process are not.
        """
        try:
            return operation(self._live())
        except _CONTROL_FLOW:
            raise
        except BaseException as e:
            log.error("the terminal emulator failed (%s); the screen was reset", e)
            self._vt = _emulator(self._cols, self._rows)
            self._dump = ""
            return fallback()

    @classmethod
    def from_dump(cls, rows: int, cols: int, dump: str, decoder_pending: bytes) -> "Screen":
        """A screen as another process left it: hibernated, woken on first use."""
        screen = cls(rows, cols)
        screen._dump = dump
        screen._graphics.translate(dump)  # (only to learn the character sets in use)
        screen._decoder.setstate((decoder_pending, 0))
        return screen

    def dump_state(self) -> tuple[str, bytes]:
        """(the dump that recreates the screen, bytes of a UTF-8 sequence begun but not ended)."""
        dump = self._guarded(lambda vt: vt.dump(), lambda: "") if self._vt else self._dump
        pending, _ = self._decoder.getstate()
        return dump, pending

    def cursor(self) -> tuple[int, int]:
        """(row, column) of the cursor, 0-based (not a client's use: output decides it)."""
        return self._guarded(lambda vt: (vt.cursor.row, vt.cursor.col), lambda: (0, 0))

    def cursor_state(self) -> str:
        """What puts back this screen's cursor, pen, character sets, scroll region,
        origin, insert and wrap modes on a terminal showing it, after something else
        was drawn there (a status line, docs/windows.md#the-status-line)."""
        self.last_used = time.monotonic()
        dump = self._guarded(lambda vt: vt.dump(), lambda: "")
        found = _CURSOR_STATE.search(dump)
        state = dump[found.start() :] if found is not None else "\x9b1;1H"
        if _SCROLL_REGION.search(state) is None:  # (only before the CUP, if anywhere)
            state = f"\x9b1;{self._rows}r" + state  # the whole screen: its own region
        return state.replace("\x9b", "\x1b[")

    def undecoded_bytes(self) -> bytes:
        """The start of a UTF-8 sequence fed but not yet complete."""
        pending, _ = self._decoder.getstate()
        return pending

    def hibernate(self) -> None:
        """Give the emulator's memory back; the next use recreates it exactly."""
        if self._vt is not None:
            self._dump = self._guarded(lambda vt: vt.dump(), lambda: "")
            self._vt = None

    def feed(self, data: bytes) -> None:
        text = self._decoder.decode(data)
        if not text:
            return
        ground_before, self._ground = self._ground, ends_in_ground(text, self._ground)
        # Plain text of a flood that scrolls away unseen is not emulated
        # (mux.terminal.fast_forward), unless a scroll region keeps lines in place.
        kept = min(self._rows, REWRAP_LINES)
        skip = skippable(text, self._rows, kept, ground_before)
        if skip is not None:
            start, end = skip
            self._emulate(text[:start])
            text = jump(self._rows) + text[end:] if self._scrolls_whole() else text[start:]
        self._emulate(text)

    def _emulate(self, text: str) -> None:
        text = composed(self._graphics.translate(text))
        # avt is markedly slower on very long strings (55 MB/s at 256 KiB against
        # 74 MB/s at 16 KiB, measured): feed large batches in slices.
        if text:
            self._guarded(lambda vt: _feed_in_slices(vt, text), lambda: None)

    def _scrolls_whole(self) -> bool:
        """A line feed at the bottom scrolls the whole screen (no scroll region)."""
        dump = self._guarded(lambda vt: vt.dump(), lambda: "")
        return _SCROLL_REGION.search(dump) is None

    def resize(self, rows: int, cols: int) -> None:
        if (rows, cols) == (self._rows, self._cols):
            return
        self.last_used = time.monotonic()
        self._guarded(lambda vt: vt.resize(cols, rows), lambda: None)
        self._rows, self._cols = rows, cols
        if self._vt is not None and self._vt.size != (cols, rows):
            # The emulator failed and was reset, blank, at the old size.
            self._vt = _emulator(cols, rows)

    def lines(self) -> list[str]:
        """The visible screen, one string a row, trailing blanks trimmed."""
        self.last_used = time.monotonic()
        return self._guarded(
            lambda vt: [line.text.rstrip() for line in vt.view()], lambda: [""] * self._rows
        )

    def repaint(self) -> str:
        """Escape sequences that redraw this screen (cursor and colours included) on a
        terminal in any state: modes reset and screen cleared first, then the dump."""
        self.last_used = time.monotonic()
        dump = self._guarded(lambda vt: vt.dump(), lambda: "")
        cols = self._cols
        spelled = _REPEATED.sub(lambda m: m[1] * (min(int(m[2]), cols) + 1), dump)
        # avt writes CSI as the 8-bit C1 control; encoded as UTF-8 (U+009B) most
        # terminals would not take it for one. A screen cell never holds a C1
        # control, so every U+009B is a CSI.
        return REPAINT_RESET + spelled.replace("\x9b", "\x1b[")
