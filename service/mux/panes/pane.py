"""One pane: a program on a PTY, its output history and screen, its input queue.

Output path (the hot path): read the master, append to the raw scrollback,
hand the bytes to every output sink, and only queue them for the emulator.
The emulator catches up in one batch when someone looks at the screen or when
the queue passes `EMULATION_BATCH_BYTES`, so an unwatched pane costs little;
a screen nobody used for `screen_idle_seconds` gives its emulator back.
"""

import asyncio
import contextlib
import errno
import logging
import os
import secrets
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from mux.panes.cwd import CwdObservation, supersedes
from mux.panes.exits import Reapable
from mux.panes.handover import EndpointRecord, PaneRecord
from mux.panes.launch_endpoint import LaunchEndpoint
from mux.panes.ledger import SpawnRecord
from mux.panes.process import set_window_size
from mux.panes.replay import CommandReplay, Step, replayable
from mux.panes.shell_integration import remove_directory
from mux.protocol.errors import InvalidArgument, MuxError, PreconditionFailed, Unavailable
from mux.protocol.names import CwdSource
from mux.protocol.osc import CwdReport, OscEvent, OscScanner, ShellMarker, TitleChange
from mux.protocol.spawn_options import LaunchKind
from mux.system.proctree import ProcessTree, working_directory
from mux.terminal.modes import ModeTracker
from mux.terminal.queries import answer, find_queries
from mux.terminal.screen import Screen
from mux.terminal.scrollback import Scrollback

log = logging.getLogger(__name__)

READ_SIZE = 65536
READ_BATCH_BYTES = 256 * 1024  # per readiness callback; less than the attach frame limit
EMULATION_BATCH_BYTES = 64 * 1024
DRAIN_LIMIT = 1 << 20

OutputSink = Callable[[bytes], None]


class PaneState(StrEnum):
    RUNNING = "running"
    EXITED = "exited"


class PaneObserver(Protocol):
    def pane_changed(self, pane: "Pane", properties: Sequence[str]) -> None: ...
    def pane_exited(self, pane: "Pane") -> None: ...


@dataclass(frozen=True)
class Launch:
    """What was started, as the client asked for it and as it was resolved."""

    kind: LaunchKind
    argv: tuple[str, ...]
    program: str  # absolute path of the executable
    env_overrides: tuple[tuple[str, str], ...]
    # Opaque identity of this launch: what application-resurrection checkpoints key on.
    invocation: str = field(default_factory=lambda: secrets.token_hex(16))
    started_at: float = field(default_factory=time.time)


class Pane:
    def __init__(
        self,
        *,
        pane_id: int,
        window: int,
        launch: Launch,
        process: "Reapable",
        master_fd: int | None,
        cwd: str,
        title: str,
        title_explicit: bool,
        rows: int,
        cols: int,
        scrollback_bytes: int,
        max_input_backlog: int,
        loop: asyncio.AbstractEventLoop,
        observer: PaneObserver,
        local_hosts: frozenset[str] = frozenset(),
        shell_token: str | None = None,
    ) -> None:
        """`local_hosts`: the names OSC 7 may give this machine; `shell_token`: what the
        shell integration of this launch marks its OSC 133 markers with."""
        self.id = pane_id
        self.window = window
        self.launch = launch
        self.pid = process.pid
        self.process = process
        self.cwd = cwd
        self.cwd_source: CwdSource = "launch"
        self.cwd_captured_at = launch.started_at
        self._cwd_from_child = False
        self.shell_token = shell_token
        self.shell_dir: Path | None = None  # the launch's integration directory
        self.spawn_record: SpawnRecord | None = None  # None: not from Spawn in this instance
        # application-resurrection/1: the launch's endpoint, and the generation of the
        # application's last durable checkpoint (None: none, or cleared).
        self.endpoint: LaunchEndpoint | None = None
        self.checkpoint_generation: int | None = None
        self.replay: CommandReplay | None = None  # a restored shell's command to type again
        # The shell's state from its OSC 133 markers: "prompt", "command" or "" (unknown).
        self.shell_state = ""
        self.last_command: str | None = None
        self.last_command_status: int | None = None
        self._osc = OscScanner(local_hosts)
        self.modes = ModeTracker()
        self.title = title
        self.title_explicit = title_explicit
        self.state = PaneState.RUNNING
        self.exit_status = 0
        self.screen = Screen(rows, cols)
        self.scrollback = Scrollback(scrollback_bytes)
        self._master_fd: int | None = master_fd
        self._pending_emulation: list[bytes] = []
        self._pending_size = 0
        self._input_backlog = bytearray()
        self._max_input_backlog = max_input_backlog
        self._writing = False
        self._input_drained: list[Callable[[], None]] = []
        self._sinks: list[OutputSink] = []
        # Order of the last use by a client (spawn, attach, typed input): what
        # "the most recently used pane" means. Set by the table.
        self.use_order = 0
        self._loop = loop
        self._observer = observer
        if master_fd is not None:
            loop.add_reader(master_fd, self._on_readable)

    # -- graceful upgrade -----------------------------------------------------

    @property
    def master_fd(self) -> int | None:
        return self._master_fd

    def handover_record(self) -> PaneRecord:
        """Everything this pane is, for the muxd that follows an exec."""
        self.catch_up_screen()
        dump, decoder_pending = self.screen.dump_state()
        return PaneRecord(
            id=self.id,
            window=self.window,
            pid=self.pid,
            kind=self.launch.kind,
            argv=list(self.launch.argv),
            program=self.launch.program,
            env_overrides=list(self.launch.env_overrides),
            invocation=self.launch.invocation,
            started_at=self.launch.started_at,
            cwd=self.cwd,
            cwd_source=self.cwd_source,
            cwd_captured_at=self.cwd_captured_at,
            shell_token=self.shell_token,
            shell_dir=str(self.shell_dir) if self.shell_dir is not None else None,
            endpoint=self._endpoint_record(),
            checkpoint_generation=self.checkpoint_generation,
            modes=sorted(self.modes.enabled),
            replay=(
                (self.replay.command, self.replay.checkpoint_generation, self.replay.phase)
                if self.replay is not None
                else None
            ),
            spawned_by=self.spawn_record.spawner if self.spawn_record else None,
            used_by_others=self.spawn_record.used_by_others if self.spawn_record else False,
            title=self.title,
            title_explicit=self.title_explicit,
            running=self.is_running,
            exit_status=self.exit_status,
            rows=self.rows,
            cols=self.cols,
            master_fd=self._master_fd,
            scrollback=self.scrollback.contents(),
            scrollback_total=self.scrollback.total,
            screen_dump=dump,
            decoder_pending=decoder_pending,
            input_backlog=bytes(self._input_backlog),
        )

    def _endpoint_record(self) -> EndpointRecord | None:
        endpoint = self.endpoint
        if endpoint is None or endpoint.stopped:
            return None
        return EndpointRecord(
            fd=endpoint.fileno(),
            directory=str(endpoint.directory),
            offer=endpoint.offer,
            shell_launch=endpoint.shell_launch,
        )

    @classmethod
    def resume(
        cls,
        record: PaneRecord,
        process: "Reapable",
        *,
        scrollback_bytes: int,
        max_input_backlog: int,
        loop: asyncio.AbstractEventLoop,
        observer: PaneObserver,
        local_hosts: frozenset[str] = frozenset(),
    ) -> "Pane":
        """The pane a previous muxd handed over, on the terminal fd it left open."""
        pane = cls(
            pane_id=record.id,
            window=record.window,
            launch=Launch(
                kind=record.kind,
                argv=tuple(record.argv),
                program=record.program,
                env_overrides=tuple(record.env_overrides),
                invocation=record.invocation,
                started_at=record.started_at,
            ),
            process=process,
            master_fd=record.master_fd,
            cwd=record.cwd,
            title=record.title,
            title_explicit=record.title_explicit,
            rows=record.rows,
            cols=record.cols,
            scrollback_bytes=scrollback_bytes,
            max_input_backlog=max_input_backlog,
            loop=loop,
            observer=observer,
            local_hosts=local_hosts,
            shell_token=record.shell_token,
        )
        pane.cwd_source = record.cwd_source
        if record.cwd_captured_at is not None:
            pane.cwd_captured_at = record.cwd_captured_at
        if record.shell_dir is not None:
            pane.shell_dir = Path(record.shell_dir)
        pane.modes = ModeTracker(frozenset(record.modes))
        if record.replay is not None:
            pane.replay = CommandReplay.resumed(*record.replay)
        if record.spawned_by is not None:
            # The ledger goes on across an upgrade: clients keep their bus
            # connections (and unique names) through it, and nothing can use a
            # pane while no muxd serves.
            pane.spawn_record = SpawnRecord(record.spawned_by, record.used_by_others)
        if not record.running:
            pane.state = PaneState.EXITED
            pane.exit_status = record.exit_status
        pane.screen = Screen.from_dump(
            record.rows, record.cols, record.screen_dump, record.decoder_pending
        )
        pane.scrollback = Scrollback.restored(
            scrollback_bytes, record.scrollback, record.scrollback_total
        )
        if record.input_backlog and record.master_fd is not None:
            pane._input_backlog += record.input_backlog
            pane._writing = True
            loop.add_writer(record.master_fd, pane._on_writable)
        return pane

    # -- properties -----------------------------------------------------------

    @property
    def argv(self) -> tuple[str, ...]:
        return self.launch.argv

    @property
    def rows(self) -> int:
        return self.screen.rows

    @property
    def cols(self) -> int:
        return self.screen.cols

    @property
    def is_running(self) -> bool:
        return self.state is PaneState.RUNNING

    # -- output ---------------------------------------------------------------

    def add_output_sink(self, sink: OutputSink) -> None:
        self._sinks.append(sink)

    def remove_output_sink(self, sink: OutputSink) -> None:
        self._sinks.remove(sink)

    def _on_readable(self) -> None:
        """Read what the terminal holds, up to READ_BATCH_BYTES, and deliver it at once.

        A PTY read returns at most about 4 KiB (the line discipline's buffer), so
        a flood arrives in many small reads; draining them here first makes one
        delivery (one frame to each client, one emulator batch entry) of many.
        """
        fd = self._master_fd
        if fd is None:
            return
        chunks: list[bytes] = []
        size = 0
        ended = False
        while size < READ_BATCH_BYTES:
            try:
                data = os.read(fd, READ_SIZE)
            except BlockingIOError:
                break
            except OSError as e:
                # EIO: every holder of the terminal's slave side has closed it.
                if e.errno != errno.EIO:
                    log.warning("pane %d: reading its terminal failed: %s", self.id, e.strerror)
                ended = True
                break
            if not data:
                ended = True
                break
            chunks.append(data)
            size += len(data)
        if chunks:
            self._deliver(chunks[0] if len(chunks) == 1 else b"".join(chunks))
        if ended:
            self._close_terminal()

    def _deliver(self, data: bytes) -> None:
        self.scrollback.append(data)
        for sink in self._sinks:
            sink(data)
        for event in self._osc.feed(data):
            self._on_osc(event)
        self.modes.feed(data)
        if not self._sinks:  # an attached client's terminal answers for itself
            data = self._answer_queries(data)
        self._pending_emulation.append(data)
        self._pending_size += len(data)
        if self._pending_size >= EMULATION_BATCH_BYTES:
            self.catch_up_screen()

    def _answer_queries(self, data: bytes) -> bytes:
        """Answer what the program asked its terminal (see terminal.queries), each with
        the screen as it is at the question; returns the rest of `data`, unfed."""
        start = 0
        for found in find_queries(data):
            self._pending_emulation.append(data[start : found.end])
            start = found.end
            self.catch_up_screen()
            reply = answer(found.query, self.screen.cursor())
            if self._master_fd is not None and self.is_running:
                with contextlib.suppress(MuxError):
                    self.send_input(reply)
        return data[start:]

    # -- what the program tells its terminal (OSC) -------------------------------

    def _on_osc(self, event: OscEvent) -> None:
        if isinstance(event, TitleChange):
            if not self.title_explicit and event.title != self.title:
                self.title = event.title
                self._observer.pane_changed(self, ("Title",))
        elif isinstance(event, CwdReport):
            self.observe_cwd(CwdObservation(event.path, "shell"))
        elif self.shell_token is not None and event.token == self.shell_token:
            # Without the launch's token, a marker is only output that looks like one.
            self._on_marker(event)

    def _on_marker(self, marker: ShellMarker) -> None:
        if self.replay is not None:
            self._replay_step(self.replay.marker(marker.kind))
        if marker.kind in ("A", "B"):
            self.shell_state = "prompt"
        elif marker.kind == "C":
            self.shell_state = "command"
            self.last_command = marker.command
            self.last_command_status = None
        elif marker.kind == "D":
            self.last_command_status = marker.status

    def _replay_step(self, step: Step | None) -> None:
        replay = self.replay
        if step is Step.TYPE and replay is not None:
            with contextlib.suppress(MuxError):
                self.send_input(replay.command.encode() + b"\r")
        elif step is Step.WITHDRAW:
            self.replay = None
            if self.endpoint is not None:
                self.endpoint.withdraw_offer()

    def snapshot_replay(self, allowlist: Sequence[str]) -> tuple[str, int | None] | None:
        """(command line, checkpoint generation) to replay at restore, if any."""
        replay = self.replay
        if replay is not None and replay.pending:
            return replay.command, replay.checkpoint_generation
        if self.shell_state != "command" or self.launch.kind is not LaunchKind.SHELL:
            return None
        checkpointed = self.checkpoint_generation is not None
        if not replayable(self.last_command, checkpointed, allowlist):
            return None
        assert self.last_command is not None
        return self.last_command, self.checkpoint_generation

    def observe_cwd(self, observation: CwdObservation) -> None:
        current = CwdObservation(
            self.cwd, self.cwd_source, self.cwd_captured_at, child=self._cwd_from_child
        )
        if not supersedes(observation, current):
            return
        changed = (observation.path, observation.source) != (self.cwd, self.cwd_source)
        self.cwd, self.cwd_source = observation.path, observation.source
        self.cwd_captured_at = observation.captured_at
        self._cwd_from_child = observation.child
        if changed:
            self._observer.pane_changed(self, ("Cwd", "CwdSource"))

    def sample_cwd(self, processes: ProcessTree) -> None:
        """A process capture: the foreground job's deepest process, else the program."""
        if not self.is_running:
            return
        group = self._foreground_group_or_none()
        target = processes.deepest_in_group(self.pid, group) if group is not None else None
        child = target is not None and target != self.pid
        path = working_directory(target if child and target is not None else self.pid)
        if path is not None:
            self.observe_cwd(CwdObservation(path, "process", child=child))

    def freeze(self) -> None:
        """Stop reading the terminal: the stop that follows closes it anyway."""
        if self._master_fd is not None:
            self._loop.remove_reader(self._master_fd)

    def show_notice(self, text: str) -> None:
        """A line from mux itself, on the screen and in the history, not to the program."""
        self._deliver(b"\x1b[2m" + text.encode() + b"\x1b[0m\r\n")

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

    def hibernate_screen_if_idle_since(self, cutoff: float) -> bool:
        # An attached client may need a repaint at any moment: keep its emulator.
        if self._sinks:
            return False
        if self.screen.is_live and self.screen.last_used < cutoff:
            self.screen.hibernate()
            return True
        return False

    def screen_lines(self) -> list[str]:
        self.catch_up_screen()
        return self.screen.lines()

    def _drain_output(self) -> None:
        """Read what the terminal still holds when the program exits.

        Bounded: a leftover background job that keeps writing is read by the
        event loop as usual, not here.
        """
        start = self.scrollback.total
        while self._master_fd is not None and self.scrollback.total - start < DRAIN_LIMIT:
            before = self.scrollback.total
            self._on_readable()
            if self.scrollback.total == before:
                break

    # -- input ----------------------------------------------------------------

    def _require_terminal(self, action: str) -> int:
        if self.state is PaneState.EXITED:
            raise PreconditionFailed(
                f"pane {self.id} has exited (status {self.exit_status}); cannot {action}"
            )
        if self._master_fd is None:
            raise PreconditionFailed(f"pane {self.id} no longer has a terminal; cannot {action}")
        return self._master_fd

    def send_input(self, data: bytes) -> None:
        fd = self._require_terminal("send input")
        if not data:
            return
        if len(data) > self._max_input_backlog:
            raise InvalidArgument(
                f"{len(data)} bytes of input is more than a pane takes at once "
                f"({self._max_input_backlog} bytes); send it in parts"
            )
        # Refused whole or accepted whole: never half of one SendInput.
        if self._input_backlog and len(self._input_backlog) + len(data) > self._max_input_backlog:
            raise Unavailable(
                f"pane {self.id} is not reading its input fast enough: "
                f"{len(self._input_backlog)} bytes are still waiting and the limit is "
                f"{self._max_input_backlog}; try again later or send less"
            )
        if not self._input_backlog:
            try:
                written = os.write(fd, data)
            except BlockingIOError:
                written = 0
            except OSError:
                raise PreconditionFailed(f"pane {self.id}'s terminal is closed") from None
            data = data[written:]
        if data:
            self._input_backlog += data
            if not self._writing:
                self._writing = True
                self._loop.add_writer(fd, self._on_writable)

    @property
    def input_backlog_bytes(self) -> int:
        """Input accepted but not yet taken by the terminal."""
        return len(self._input_backlog)

    def when_input_drained(self, callback: Callable[[], None]) -> None:
        """Call `callback` once, when the input backlog is empty (now, if it is)."""
        if not self._input_backlog:
            callback()
        else:
            self._input_drained.append(callback)

    def _on_writable(self) -> None:
        fd = self._master_fd
        if fd is None or not self._input_backlog:
            self._stop_writing()
            return
        try:
            written = os.write(fd, self._input_backlog[:READ_SIZE])
        except BlockingIOError:
            return
        except OSError:
            self._input_backlog.clear()
            self._stop_writing()
            return
        del self._input_backlog[:written]
        if not self._input_backlog:
            self._stop_writing()

    def _stop_writing(self) -> None:
        if self._writing:
            self._writing = False
            if self._master_fd is not None:
                self._loop.remove_writer(self._master_fd)
        waiting, self._input_drained = self._input_drained, []
        for callback in waiting:
            callback()

    # -- control --------------------------------------------------------------

    def resize(self, rows: int, cols: int) -> None:
        fd = self._require_terminal("resize it")
        if (rows, cols) == (self.rows, self.cols):
            return
        # Output already read was laid out for the old size.
        self.catch_up_screen()
        self.screen.resize(rows, cols)
        # The kernel sends SIGWINCH to the foreground process group.
        set_window_size(fd, rows, cols)
        self._observer.pane_changed(self, ("Rows", "Cols"))

    def foreground_process_group(self) -> int:
        """The terminal's foreground group; without one, the program's own group."""
        pgid = self._foreground_group_or_none()
        return self.pid if pgid is None else pgid

    def send_signal(self, signum: signal.Signals) -> None:
        if self.state is PaneState.EXITED:
            raise PreconditionFailed(
                f"pane {self.id} has exited (status {self.exit_status}); cannot signal it"
            )
        pgid = self.foreground_process_group()
        try:
            os.killpg(pgid, signum)
        except ProcessLookupError:
            raise PreconditionFailed(f"pane {self.id} has no process left to signal") from None
        except PermissionError:
            raise PreconditionFailed(
                f"mux may not signal the foreground job of pane {self.id} (it runs as another user)"
            ) from None

    # -- end of life ----------------------------------------------------------

    def process_exited(self, status: int) -> None:
        # First the state: the pid is reaped, nothing may signal it any more.
        self.state = PaneState.EXITED
        self.exit_status = status
        self._remove_shell_dir()
        self._close_endpoint()
        self._drain_output()
        self._observer.pane_changed(self, ("State", "ExitStatus"))
        self._observer.pane_exited(self)

    def _close_terminal(self) -> None:
        fd = self._master_fd
        if fd is None:
            return
        self._stop_writing()
        self._loop.remove_reader(fd)
        self._master_fd = None
        self._input_backlog.clear()
        os.close(fd)

    def hang_up(self) -> None:
        """Close the pane like a closed terminal window: SIGHUP to its processes."""
        if self.is_running:
            for pgid in {self._foreground_group_or_none(), self.pid}:
                if pgid is None:
                    continue
                for signum in (signal.SIGHUP, signal.SIGCONT):
                    with contextlib.suppress(OSError):
                        os.killpg(pgid, signum)
        self._close_terminal()
        self._sinks.clear()
        self._remove_shell_dir()
        self._close_endpoint()

    def _close_endpoint(self) -> None:
        endpoint, self.endpoint = self.endpoint, None
        if endpoint is not None:
            endpoint.close()

    def foreground_group(self) -> int | None:
        """The terminal's foreground process group, if there is one."""
        return self._foreground_group_or_none()

    def checkpoint_changed(self, generation: int | None) -> None:
        self.checkpoint_generation = generation
        self._observer.pane_changed(self, ("Checkpoint",))  # not a D-Bus property

    def _remove_shell_dir(self) -> None:
        directory, self.shell_dir = self.shell_dir, None
        remove_directory(directory)

    def _foreground_group_or_none(self) -> int | None:
        if self._master_fd is None:
            return None
        try:
            pgid = os.tcgetpgrp(self._master_fd)
        except OSError:
            return None
        # 0 means "no foreground group" (the session leader just exited);
        # killpg(0) would signal mux's own process group.
        return pgid if pgid > 0 else None
