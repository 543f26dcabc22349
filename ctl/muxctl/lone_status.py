"""The status line of a pane shown alone (docs/windows.md#the-status-line).

muxd draws it (it writes to the terminal itself: docs/attach-protocol.md#the-status-line);
muxctl says what it reads, from what D-Bus says, once a second, and only when that
changed. When the attach ends, the terminal is given back whole: its scroll region
reset and the status line's row cleared, the cursor where the pane left it.
"""

import time
from collections.abc import Callable

from mux.protocol import attach as proto
from mux.protocol.status_row import STATUS_STYLE
from mux.protocol.visible import visible
from muxctl.status_line import fit

# The text for (pane, columns), None when it cannot be had now (muxd upgrading).
StatusSource = Callable[[int, int], str | None]

POLL_SECONDS = 1.0  # as the window view's


class LoneStatus:
    def __init__(self, source: StatusSource) -> None:
        self._source = source
        self._sent: str | None = None
        self._next = 0.0  # when to ask the source again (monotonic)
        self.on = False  # the service keeps the status line (WELCOME said so)

    def again(self) -> None:
        """Send the text anew at the next look (a new width, a new connection)."""
        self._sent = None
        self._next = 0.0

    def due_in(self) -> float | None:
        """Seconds until the next look; None while there is no status line."""
        return max(0.0, self._next - time.monotonic()) if self.on else None

    def frame(self, pane: int, cols: int) -> proto.Status | None:
        """The STATUS to send, when the look is due and the text changed."""
        if not self.on or time.monotonic() < self._next:
            return None
        self._next = time.monotonic() + POLL_SECONDS
        if not pane:  # (ATTACHED names it, and asks for a look at once: `again`)
            return None
        text = self._source(pane, cols)
        if text is None or text == self._sent:
            return None
        self._sent = text
        return proto.Status(text.encode())

    def saying(self, state: str, rows: int, cols: int) -> bytes:
        """What shows `state` on the status line while muxd cannot (its upgrade), its
        cursor kept; muxd draws the line anew once it is back."""
        self.again()
        text = fit(f" {visible(state)}", cols).encode()
        return b"\x1b7\x1b[%d;1H%s\x1b[2K%s\x1b[0m\x1b8" % (rows, STATUS_STYLE.encode(), text)

    @staticmethod
    def given_back(rows: int) -> bytes:
        """What gives the terminal back without the status line: the whole screen
        scrolls again, the last row is blank, the cursor stays where it is."""
        return b"\x1b7\x1b[r\x1b8\x1b7\x1b[%d;1H\x1b[0m\x1b[2K\x1b8" % rows
