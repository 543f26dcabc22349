"""The status line a client asked for in HELLO, as one session keeps it: the rows of
its terminal, the text it sends in STATUS, and when the line is drawn
(docs/attach-protocol.md#the-status-line). What the stream does to the terminal's
last row is `mux.protocol.status_row`'s business; this draws the line when that says
it is due, with the pane's cursor put back after it."""

import asyncio
from collections.abc import Callable

from mux.attach.attachable import AttachablePane
from mux.protocol.status_row import StatusRow


class StatusLine:
    def __init__(
        self,
        write: Callable[[bytes], None],
        showing: Callable[[], AttachablePane | None],
    ) -> None:
        """`write`: bytes to the client's terminal, after what it was sent; `showing`:
        the pane whose output the client is sent live now (None: none)."""
        self._write = write
        self._showing = showing
        self._row: StatusRow | None = None  # None: no status line asked for
        self._text = ""
        self._soon = False  # a look at the line is on its way

    def asked(self, on: bool) -> None:
        """HELLO said whether the client wants a status line (its rows: RESIZE says)."""
        self._row = StatusRow(0) if on else None

    def resize(self, rows: int) -> int:
        """The client's terminal has `rows`: how many of them the line takes from the pane."""
        if self._row is None:
            return 0
        taken = 1 if rows > 1 else 0  # (a terminal of one row is the pane's)
        self._row.resize(rows - taken)
        self._draw_soon()
        return taken

    def set_text(self, text: str) -> None:
        self._text = text
        if self._row is not None:
            self._row.dirty = True
            self._draw_soon()

    def stream(self, data: bytes) -> bytes:
        """Output on its way to the client: kept off the line, which is drawn again
        after it when it was cleared."""
        if (row := self._row) is None:
            return data
        data = row.rewrite(data)
        if row.dirty:
            self._draw_soon()
        return data

    def repainted(self, repaint: bytes, pane: AttachablePane) -> bytes:
        """A repaint of `pane` to send, with the line drawn after it."""
        if (row := self._row) is None:
            return repaint
        row.restart()
        repaint = row.rewrite(repaint)
        if row.safe and row.pane_rows:
            repaint += row.draw(self._text, pane.cursor_state())
        return repaint

    def _draw_soon(self) -> None:
        """Draw the line once the output that made it due is in the pane's screen (the
        pane emulates what it printed after its clients have it: this comes next)."""
        if not self._soon:
            self._soon = True
            asyncio.get_running_loop().call_soon(self._draw)

    def _draw(self) -> None:
        self._soon = False
        row, pane = self._row, self._showing()
        if row is None or pane is None:
            return  # (a repaint draws it: on the attach, or when the client catches up)
        if row.dirty and row.safe and row.pane_rows:
            self._write(row.draw(self._text, pane.cursor_state()))
