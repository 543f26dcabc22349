"""A pane's history as text: the lines scrolled off its screen, then the screen
(`GetHistory`, `muxctl capture --history`). Read on the event loop (a copy of the ring
of output and the screen's dump), made into lines on a worker thread: the same lines
the pane's saved contents hold (mux.terminal.saved_contents), without their colours."""

import re
from collections.abc import Callable

from mux.panes.pane import Pane
from mux.protocol.errors import InvalidArgument
from mux.terminal.saved_contents import contents_of

MAX_LINES = 100_000  # at most this many lines back, whatever is asked
MAX_BYTES = 64 << 20
_SGR = re.compile(r"\x1b\[[0-9;:]*m")


def history_text(pane: Pane, lines: int) -> Callable[[], list[str]]:
    """The work that makes the last `lines` lines of `pane` (0: all it keeps, up to
    MAX_LINES) into text: run it off the loop."""
    if lines > MAX_LINES:
        raise InvalidArgument(f"lines must be at most {MAX_LINES:,} (0: all the history)")
    view = pane.view
    history = view.scrollback.contents()
    dump, _ = view.dump_screen()
    rows, cols, cut = pane.rows, pane.cols, view.scrollback.total > len(history)

    def made() -> list[str]:
        text = contents_of(
            history,
            dump,
            rows,
            cols,
            max_lines=lines or MAX_LINES,
            max_bytes=MAX_BYTES,
            history_cut=cut,
        )
        return _SGR.sub("", text.decode(errors="replace")).split("\r\n")[:-1]

    return made
