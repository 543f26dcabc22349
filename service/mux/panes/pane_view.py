"""What can be seen of a pane: its output history, its screen, and who watches it live.

The emulator is lazy: output is only queued for it, and it catches up in one
batch when someone looks at the screen or when the queue passes
`EMULATION_BATCH_BYTES`, so an unwatched pane costs little; a screen nobody
used for a while gives its emulator back (hibernation, see
mux.terminal.screen). While no client is attached, mux answers what the
program asks its terminal (cursor position, device attributes: see
mux.terminal.queries and
docs/shell-integration.md#terminal-queries-answered-while-detached), each with
the screen as it was at the question.
"""

import textwrap
from collections.abc import Callable

from mux.protocol.modes import ModeTracker
from mux.terminal.queries import answer, find_queries
from mux.terminal.saved_contents import wrap_words
from mux.terminal.screen import Screen
from mux.terminal.scrollback import Scrollback

EMULATION_BATCH_BYTES = 64 * 1024

OutputSink = Callable[[bytes], None]


def notice_line(text: str, cols: int | None = None) -> bytes:
    """A line from mux itself (dim), as it goes on a pane's screen and into its history;
    wrapped at word boundaries to `cols` (None: left to the terminal), as a terminal
    would cut words anywhere in a narrow pane."""
    if cols is None:
        rows = text.split("\r\n")
    elif text.isascii():  # one cell a character: the standard library's wrap, 20x faster
        width = max(cols, 1)
        rows = [
            row
            for line in text.replace("\r\n", "\n").split("\n")
            # (a line that fits as it is skips the wrap: 500 held panes' notices at a
            # restore spent a tenth of its time in textwrap)
            for row in (
                [line.rstrip()]
                if len(line) <= width
                else textwrap.wrap(line, width, break_on_hyphens=False) or [""]
            )
        ]
    else:
        rows = wrap_words(text, cols)
    return b"\x1b[2m" + "\r\n".join(rows).encode() + b"\x1b[0m\r\n"


class PaneView:
    def __init__(
        self, screen: Screen, scrollback: Scrollback, modes: ModeTracker | None = None
    ) -> None:
        self.screen = screen
        self.scrollback = scrollback
        self.modes = modes if modes is not None else ModeTracker()
        self._pending_emulation: list[bytes] = []
        self._pending_size = 0
        self._sinks: list[OutputSink] = []
        self._last_dump: tuple[tuple[int, int, int], tuple[str, bytes]] | None = None

    @classmethod
    def blank(cls, rows: int, cols: int, scrollback_bytes: int) -> "PaneView":
        return cls(Screen(rows, cols), Scrollback(scrollback_bytes))

    @property
    def rows(self) -> int:
        return self.screen.rows

    @property
    def cols(self) -> int:
        return self.screen.cols

    # -- live watchers ------------------------------------------------------------

    def add_output_sink(self, sink: OutputSink) -> None:
        self._sinks.append(sink)

    def remove_output_sink(self, sink: OutputSink) -> None:
        self._sinks.remove(sink)

    @property
    def has_sinks(self) -> bool:
        return bool(self._sinks)

    def clear_sinks(self) -> None:
        self._sinks.clear()

    def send_to_sinks(self, data: bytes) -> None:
        for sink in self._sinks:
            sink(data)

    # -- the screen -----------------------------------------------------------------

    def answer_queries(self, data: bytes, reply: Callable[[bytes], None]) -> bytes:
        """While nobody is attached, answer what the program asked its terminal in `data`,
        each with the screen as it is at the question, through `reply`; returns the rest
        of `data`, not yet queued for the emulator."""
        if self._sinks:  # an attached client's terminal answers for itself
            return data
        start = 0
        for found in find_queries(data):
            self._pending_emulation.append(data[start : found.end])
            start = found.end
            self.catch_up_screen()
            reply(answer(found.query, self.screen.cursor()))
        return data[start:]

    def queue_for_emulation(self, data: bytes) -> None:
        self._pending_emulation.append(data)
        self._pending_size += len(data)
        if self._pending_size >= EMULATION_BATCH_BYTES:
            self.catch_up_screen()

    def catch_up_screen(self) -> None:
        """Feed queued output to the emulator, in one batch."""
        if not self._pending_emulation:
            return
        data = b"".join(self._pending_emulation)
        self._pending_emulation.clear()
        self._pending_size = 0
        self.screen.feed(data)

    def repaint(self) -> bytes:
        """Escape sequences that redraw the pane's screen on any terminal."""
        self.catch_up_screen()
        # The first bytes of a character the program has not finished writing
        # belong after the repaint: the stream goes on with the rest of it.
        repaint = self.screen.repaint().encode() + self.modes.sequence()
        return repaint + self.screen.undecoded_bytes()

    def cursor_state(self) -> bytes:
        """What puts the terminal's cursor, pen and modes back as the screen has them
        (mux.terminal.screen), once what was printed so far is on it."""
        self.catch_up_screen()
        return self.screen.cursor_state().encode()

    def screen_lines(self) -> list[str]:
        self.catch_up_screen()
        return self.screen.lines()

    def resize(self, rows: int, cols: int) -> None:
        # Output already read was laid out for the old size.
        self.catch_up_screen()
        self.screen.resize(rows, cols)

    def hibernate_if_idle_since(self, cutoff: float) -> bool:
        """Give the emulator back if nobody used the screen since `cutoff` (monotonic)."""
        # An attached client may need a repaint at any moment: keep its emulator.
        if self._sinks:
            return False
        if self.screen.is_live and self.screen.last_used < cutoff:
            self.screen.hibernate()
            return True
        return False

    def dump_screen(self) -> tuple[str, bytes]:
        """The screen as avt's dump and the undecoded bytes (for the handover). The
        crash record asks every second: a screen that neither got output nor changed
        size since the last dump is not emulated and dumped again."""
        key = (self.scrollback.total, self.rows, self.cols)
        if self._last_dump is not None and self._last_dump[0] == key:
            return self._last_dump[1]
        self.catch_up_screen()
        dumped = self.screen.dump_state()
        self._last_dump = (key, dumped)
        return dumped
