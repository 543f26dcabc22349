"""Copy mode, the chooser and the list of the keys for a pane shown alone (`muxctl
attach` of a lone pane, which hands the terminal to muxd): once detached, the pane's
history (or every window and pane, or the keys) on the terminal's alternate screen,
its normal screen and scrollback untouched; then the attach goes on
(docs/windows.md#copy-mode)."""

import select
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING

from muxctl import copy_view
from muxctl.chooser import Chooser, Chosen, choices, listing
from muxctl.clipboard import PasteBuffer, clipboard_sequence
from muxctl.copy_mode import Copied, CopyMode, ModeKeys
from muxctl.key_reader import KeyReader
from muxctl.rawterm import RawTerminal, read_keys, window_size
from muxctl.signal_wakeup import pending_signals, signal_wakeups
from muxctl.terminal_out import TerminalOut
from muxctl.window_commands import plain_entries

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
    ahead: bytes = b"",
) -> int | None:
    """Copy mode over the whole terminal until it ends; the signal that ended it instead
    (SIGTERM, SIGHUP, SIGINT: the attach ends too), else None."""
    (lines,) = client.call("GetHistory", body=[pane, 0])
    mode = CopyMode(list(lines), *window_size(fds[1]), mode_keys)
    if page_up:
        mode.feed(["PageUp"])

    def copied(ended: object) -> bytes:
        if not isinstance(ended, Copied):
            return b""
        buffer.text = ended.text
        return clipboard_sequence(ended.text)

    return _alone(mode, fds, copied, ahead)[1]


def choose_alone(
    client: "MuxClient", pane: int, *, fds: tuple[int, int] = (0, 1), ahead: bytes = b""
) -> tuple[Chosen | None, int | None]:
    """The chooser (`w`) over the whole terminal, pane `pane` selected: what was chosen
    (None: nothing), and the signal that ended it instead."""
    windows, panes = (plain_entries(client, member) for member in ("ListWindows", "ListPanes"))
    window = next((int(p["window"]) for p in panes if int(p["id"]) == pane), 0)
    mode = Chooser(choices(windows, panes), (window, pane), *window_size(fds[1]))
    ended, stopped = _alone(mode, fds, lambda ended: b"", ahead)
    return (ended if isinstance(ended, Chosen) else None), stopped


def keys_alone(keys: list[str], *, fds: tuple[int, int] = (0, 1), ahead: bytes = b"") -> int | None:
    """The keys (`?`, a line each) over the whole terminal until read; the signal that
    ended it instead, else None."""
    mode = Chooser(listing(keys), (0, 0), *window_size(fds[1]))
    return _alone(mode, fds, lambda ended: b"", ahead)[1]


def _alone(
    mode: CopyMode | Chooser,
    fds: tuple[int, int],
    after: Callable[[object], bytes],
    ahead: bytes,
) -> tuple[object, int | None]:
    """`mode` on the alternate screen until it ends (how; `after` says what to write
    once the normal screen is back), or a signal ends it (which). `ahead`: keys typed
    after the one that asked for it, read already."""
    in_fd, out_fd = fds
    reader, out = KeyReader(), TerminalOut(out_fd)
    ended: object = mode.feed(reader.feed(ahead)) if ahead else None
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
        out.add(b"\x1b[0m" + NORMAL_SCREEN + after(ended))
        out.flush(FLUSH_SECONDS)
    return ended, stopped


def _drawn(mode: CopyMode | Chooser) -> bytes:
    """The whole view, every row drawn (a key redraws it: a screenful is a few KiB)."""
    parts = ["\x1b[?25l"]
    if isinstance(mode, Chooser):
        rows, (row, col) = mode.drawn(corner=True)
    else:
        rows, (row, col) = copy_view.rows(mode, corner=True), copy_view.cursor(mode)
    for at, form in enumerate(rows):
        parts.append(f"\x1b[{at + 1};1H{form}")
    parts.append(f"\x1b[{row + 1};{col + 1}H\x1b[?25h")
    return "".join(parts).encode()
