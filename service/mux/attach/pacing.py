"""Whether an attached client is sent a pane's output live, or is behind and shown its
screen instead (docs/attach-protocol.md#backpressure).

A client falls behind when more of the output waits for it than its bound: from then
on the output is skipped (the program is never held back), and once the client has
taken what was queued it is shown the latest screen. A frame later it is live again
if the pane printed little meanwhile, or else shown the latest screen once more as
soon as it has taken the last: a flood costs the client a screen a frame (tmux redraws
every 100 ms), not every byte.

The session owns the connection; the pacing only decides, through the callables it is
given, and keeps the one timer.
"""

import asyncio
from collections.abc import Callable

# While a client is behind and the pane keeps printing, it is shown the latest screen
# at most this often.
FRAME_SECONDS = 0.05
LAG_MIN_BYTES = 64 * 1024


def lag_bytes(cells: int, buffer_limit: int) -> int:
    """How much may wait for a client's terminal, handed over, before it is behind:
    about eight screens' worth of its `cells`, as tmux's TTY_BLOCK_START (a repaint
    then costs the terminal less than catching up), at least LAG_MIN_BYTES, at most
    the buffer (a client's connection is bounded by the buffer alone). Also, in a
    frame, the output that still counts as quiet."""
    return min(buffer_limit, max(LAG_MIN_BYTES, cells * 8))


class Pacing:
    def __init__(
        self,
        show_screen: Callable[[], None],
        quiet_bytes: Callable[[], int],
        when_drained: Callable[[Callable[[], None]], None],
    ) -> None:
        """`show_screen`: repaint the client (when it is attached); `quiet_bytes`: less
        output than this in a frame, and the client goes live again; `when_drained`:
        call back once what waits for the client is written (True), or say that
        nothing waits (False)."""
        self._show_screen = show_screen
        self._quiet_bytes = quiet_bytes
        self._when_drained = when_drained
        self.behind = False  # output is skipped; the screen is shown instead
        self.paused = False  # the client's connection is past its high-water mark
        self._skipped = 0  # bytes skipped since the screen was last shown
        self._frame: asyncio.TimerHandle | None = None

    def skip(self, size: int) -> None:
        self._skipped += size

    def fell_behind(self) -> bool:
        """The client's queue passed its bound; True when it was live until now."""
        self.paused = True
        was_behind, self.behind = self.behind, True
        return not was_behind

    def caught_up(self) -> None:
        """What was queued for the client is written: show it the latest screen, and
        look again a frame later."""
        self.paused = False
        if not self.behind:
            return
        self._show_screen()
        self._skipped = 0
        if self._frame is None:
            self._frame = asyncio.get_running_loop().call_later(FRAME_SECONDS, self._look)

    def _look(self) -> None:
        self._frame = None
        if not self.behind:
            return
        if self._skipped < self._quiet_bytes():
            self.behind = False  # (the screen shown is current, or this repaint makes it so)
            if self._skipped:
                self._show_screen()
        elif not self.paused:  # (else the connection says when it has taken what waits)
            self._when_drained(self.caught_up)

    def stop(self) -> None:
        if self._frame is not None:
            self._frame.cancel()
            self._frame = None
