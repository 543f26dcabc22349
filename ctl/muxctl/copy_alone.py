"""Copy mode for a pane shown alone (`muxctl attach` of a lone pane, which hands the
terminal to muxd): once detached, the pane's history on the terminal's alternate screen,
its normal screen and scrollback untouched; then the attach goes on
(docs/windows.md#copy-mode)."""

import select
import signal
from typing import TYPE_CHECKING

from muxctl import copy_view
from muxctl.clipboard import PasteBuffer, clipboard_sequence
from muxctl.copy_mode import Copied, CopyMode, Ended, ModeKeys
from muxctl.key_reader import KeyReader
from muxctl.rawterm import RawTerminal, read_keys, window_size
from muxctl.signal_wakeup import pending_signals, signal_wakeups
from muxctl.terminal_out import TerminalOut

if TYPE_CHECKING:
    from muxctl.client import MuxClient

FLUSH_SECONDS = 2.0
ALTERNATE_SCREEN, NORMAL_SCREEN = b"\x1b[?1049h", b"\x1b[?1049l"


def copy_alone(
    client: "MuxClient",
    pane: int,
    buffer: PasteBuffer,
    *,
    page_up: bool,
    mode_keys: ModeKeys,
    fds: tuple[int, int] = (0, 1),
) -> int | None:
    """Copy mode over the whole terminal until it ends; the signal that ended it instead
    (SIGTERM, SIGHUP, SIGINT: the attach ends too), else None."""
    in_fd, out_fd = fds
    (lines,) = client.call("GetHistory", body=[pane, 0])
    mode = CopyMode(list(lines), *window_size(out_fd), mode_keys)
    if page_up:
        mode.feed(["PageUp"])
    reader, out = KeyReader(), TerminalOut(out_fd)
    ended: Copied | Ended | None = None
    stopped: int | None = None
    with signal_wakeups() as wake_fd, RawTerminal(in_fd, out_fd):
        out.add(ALTERNATE_SCREEN)
        while ended is None and stopped is None:
            out.add(_drawn(mode))
            out.flush(FLUSH_SECONDS)
            ready = select.select([in_fd, wake_fd], [], [])[0]
            if wake_fd in ready:
                for signum in pending_signals(wake_fd):
                    if signum == signal.SIGWINCH:
                        mode.resize(*window_size(out_fd))
                    else:
                        stopped = signum
            if in_fd in ready and stopped is None:
                data = read_keys(in_fd)
                if data == b"":  # the terminal is gone
                    stopped = signal.SIGHUP
                elif data:
                    ended = mode.feed(reader.feed(data))
        out.add(b"\x1b[0m" + NORMAL_SCREEN)
        if isinstance(ended, Copied):
            buffer.text = ended.text
            out.add(clipboard_sequence(ended.text))
        out.flush(FLUSH_SECONDS)
    return stopped


def _drawn(mode: CopyMode) -> bytes:
    """The whole view, every row drawn (a key redraws it: a screenful is a few KiB)."""
    parts = ["\x1b[?25l"]
    for row, form in enumerate(copy_view.rows(mode, corner=True)):
        parts.append(f"\x1b[{row + 1};1H{form}")
    row, col = copy_view.cursor(mode)
    parts.append(f"\x1b[{row + 1};{col + 1}H\x1b[?25h")
    return "".join(parts).encode()
