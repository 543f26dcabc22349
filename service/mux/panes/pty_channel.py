"""A pane's terminal as mux holds it: the PTY master, and nothing else holds it.

Output: read in batches and handed, whole, to one callback. Input: written at
once when the terminal takes it, else kept in a bounded backlog that the event
loop writes as the program reads; a SendInput is accepted whole or refused
whole (docs/dbus-api.md#manager-methods). Also here: the window size, the foreground
process group, the hang-up, and reading what is left when the program exits.
The terminal is closed when every holder of its slave side has closed it (the
master reads EIO), or when mux closes it; `is_open` says which it is now.
"""

import array
import asyncio
import contextlib
import errno
import fcntl
import logging
import os
import signal
import termios
from collections.abc import Callable

from mux.panes.process import set_window_size
from mux.protocol.errors import InvalidArgument, PreconditionFailed, Unavailable
from mux.system.shared_reader import SharedReader, SwitchingReader

log = logging.getLogger(__name__)

READ_SIZE = 65536
# Per readiness callback; less than the attach frame limit. A pane that always
# has more (a flood) gets this much of each loop turn and waits for the next:
# 256 KiB, emulated and relayed, held the loop ~7 ms a turn for everyone else.
READ_BATCH_BYTES = 64 * 1024
# Linux's terminal line discipline hands out at most its 4 KiB buffer less one
# byte a read: a shorter read emptied it, and asking again would only fail with
# EAGAIN (one syscall and one exception per output burst of every pane).
FULL_TERMINAL_READ = 4095
DRAIN_LIMIT = 1 << 20

OutputCallback = Callable[[bytes], None]


_COUNT = array.array("i", [0])  # where FIONREAD answers (only the loop's thread reads)


def _holds_output(fd: int) -> bool:
    """The terminal's line discipline has output to hand out now.

    Asked before reading again after a full read: a read that finds nothing
    there first waits for the kernel to move what the program wrote into it (a
    worker thread's job, late when every core is busy): up to 44 ms a read with
    500 busy panes, 1.3 s in all over a 15 s run (bench/load.py). This count
    never waits; what is still on its way wakes the reader again.
    """
    try:
        fcntl.ioctl(fd, termios.FIONREAD, _COUNT, True)
    except OSError:
        return True  # (let the read say what is wrong)
    return _COUNT[0] > 0


def _discard(data: bytes) -> None:
    """Where output goes before `start`: nowhere (nothing is read before it)."""


class PtyChannel:
    def __init__(
        self,
        master_fd: int | None,
        loop: asyncio.AbstractEventLoop,
        *,
        pane_id: int,
        max_input_backlog: int,
        input_backlog: bytes = b"",
        shared_reader: SharedReader | None = None,
    ) -> None:
        """`master_fd`: non-blocking, now owned by the channel (None: already closed);
        `input_backlog`: input accepted by a previous muxd, not yet written;
        `shared_reader`: where output is read in turn with other panes' unless it is
        read promptly (None: always on a reader of its own)."""
        self._fd = master_fd
        self._loop = loop
        self._reader = SwitchingReader(loop, shared_reader)
        self._pane_id = pane_id  # for messages and logs
        self._max_input_backlog = max_input_backlog
        self._input_backlog = bytearray(input_backlog if master_fd is not None else b"")
        self._writing = False
        self._input_drained: list[Callable[[], None]] = []
        self._deliver: OutputCallback = _discard
        self.bytes_read = 0

    def start(self, deliver: OutputCallback) -> None:
        """Start reading, handing every batch to `deliver`, and write any backlog."""
        self._deliver = deliver
        if self._fd is None:
            return
        self._reader.start(self._fd, self._on_readable)
        if self._input_backlog:
            self._start_writing(self._fd)

    @property
    def fd(self) -> int | None:
        return self._fd

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def require_open(self, action: str) -> int:
        if self._fd is None:
            raise PreconditionFailed(
                f"pane {self._pane_id} no longer has a terminal; cannot {action}"
            )
        return self._fd

    # -- output -----------------------------------------------------------------

    def _on_readable(self) -> None:
        """Read what the terminal holds, up to READ_BATCH_BYTES, and deliver it at once.

        A PTY read returns at most about 4 KiB (the line discipline's buffer), so
        a flood arrives in many small reads; draining them here first makes one
        delivery (one frame to each client, one emulator batch entry) of many.
        """
        fd = self._fd
        if fd is None:
            return
        chunks: list[bytes] = []
        size = 0
        ended = False
        while size < READ_BATCH_BYTES:
            if chunks and not _holds_output(fd):
                break
            try:
                data = os.read(fd, READ_SIZE)
            except BlockingIOError:
                break
            except OSError as e:
                # EIO: every holder of the terminal's slave side has closed it.
                if e.errno != errno.EIO:
                    log.warning(
                        "pane %d: reading its terminal failed: %s", self._pane_id, e.strerror
                    )
                ended = True
                break
            if not data:
                ended = True
                break
            chunks.append(data)
            size += len(data)
            if len(data) < FULL_TERMINAL_READ:
                break  # (more may come meanwhile: the loop calls again while it is readable)
        if chunks:
            self.bytes_read += size
            self._deliver(chunks[0] if len(chunks) == 1 else b"".join(chunks))
        if ended:
            self.close()

    def drain(self) -> None:
        """Read what the terminal still holds when the program exits.

        Bounded: a leftover background job that keeps writing is read by the
        event loop as usual, not here.
        """
        start = self.bytes_read
        while self._fd is not None and self.bytes_read - start < DRAIN_LIMIT:
            before = self.bytes_read
            self._on_readable()
            if self.bytes_read == before:
                break

    def read_promptly(self, prompt: bool) -> None:
        """Read output as soon as it comes (someone watches it live), or in turn with
        the other panes' (mux.system.shared_reader)."""
        self._reader.read_promptly(prompt)

    def stop_reading(self) -> None:
        self._reader.stop()

    # -- input ------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Write `data` now or after what is waiting; refused whole when it does not fit."""
        fd = self.require_open("send input")
        if not data:
            return
        if len(data) > self._max_input_backlog:
            raise InvalidArgument(
                f"{len(data)} bytes of input is more than a pane takes at once "
                f"({self._max_input_backlog} bytes, the setting max_input_backlog_bytes); "
                "send it in parts"
            )
        # Refused whole or accepted whole: never half of one SendInput.
        waiting = len(self._input_backlog)
        if waiting and waiting + len(data) > self._max_input_backlog:
            raise Unavailable(
                f"pane {self._pane_id} is not reading its input fast enough: "
                f"{waiting} bytes are still waiting and the limit is "
                f"{self._max_input_backlog} (the setting max_input_backlog_bytes); "
                "try again later or send less"
            )
        if not waiting:
            try:
                written = os.write(fd, data)
            except BlockingIOError:
                written = 0
            except OSError:
                raise PreconditionFailed(f"pane {self._pane_id}'s terminal is closed") from None
            data = data[written:]
        if data:
            self._input_backlog += data
            self._start_writing(fd)

    @property
    def input_backlog_bytes(self) -> int:
        """Input accepted but not yet taken by the terminal."""
        return len(self._input_backlog)

    @property
    def input_backlog(self) -> bytes:
        return bytes(self._input_backlog)

    def when_input_drained(self, callback: Callable[[], None]) -> None:
        """Call `callback` once, when the input backlog is empty (now, if it is)."""
        if not self._input_backlog:
            callback()
        else:
            self._input_drained.append(callback)

    def _start_writing(self, fd: int) -> None:
        if not self._writing:
            self._writing = True
            self._loop.add_writer(fd, self._on_writable)

    def _on_writable(self) -> None:
        fd = self._fd
        if fd is None or not self._input_backlog:
            self._stop_writing()
            return
        try:
            written = os.write(fd, self._input_backlog[:READ_SIZE])
        except BlockingIOError:
            return
        except OSError as e:
            # Accepted input that will never arrive: say so, once.
            log.warning(
                "pane %d: %d bytes of input were lost: writing to its terminal failed: %s",
                self._pane_id,
                len(self._input_backlog),
                e.strerror,
            )
            self._input_backlog.clear()
            self._stop_writing()
            return
        del self._input_backlog[:written]
        if not self._input_backlog:
            self._stop_writing()

    def _stop_writing(self) -> None:
        if self._writing:
            self._writing = False
            if self._fd is not None:
                self._loop.remove_writer(self._fd)
        waiting, self._input_drained = self._input_drained, []
        for callback in waiting:
            callback()

    # -- control ----------------------------------------------------------------

    def set_window_size(self, rows: int, cols: int) -> None:
        # The kernel sends SIGWINCH to the foreground process group.
        set_window_size(self.require_open("resize it"), rows, cols)

    def foreground_group(self) -> int | None:
        """The terminal's foreground process group, if there is one."""
        if self._fd is None:
            return None
        try:
            pgid = os.tcgetpgrp(self._fd)
        except OSError:
            return None
        # 0 means "no foreground group" (the session leader just exited);
        # killpg(0) would signal mux's own process group.
        return pgid if pgid > 0 else None

    def hang_up(self, program_group: int | None) -> None:
        """Like a closed terminal window: SIGHUP (and SIGCONT, so that a stopped job
        hears it) to the foreground job and to `program_group` (None: no program left
        to tell), then the terminal is closed."""
        if program_group is not None:
            for pgid in {self.foreground_group(), program_group}:
                if pgid is None:
                    continue
                for signum in (signal.SIGHUP, signal.SIGCONT):
                    with contextlib.suppress(OSError):
                        os.killpg(pgid, signum)
        self.close()

    def close(self) -> None:
        fd = self._fd
        if fd is None:
            return
        self._stop_writing()
        self.stop_reading()
        self._fd = None
        self._input_backlog.clear()
        os.close(fd)
