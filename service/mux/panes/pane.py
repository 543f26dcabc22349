"""One pane: a program on a PTY, and what is known about it.

A pane is its identity (id, window, launch, process, state, exit status, the
spawn record, the application-resurrection endpoint, the order of its last
use) and three parts, along the way its data flows:

- `terminal` (PtyChannel): the PTY master — output read, input written, size,
  foreground process group, hang-up;
- `view` (PaneView): history, screen, modes, live watchers;
- `shell` (ShellTracker): what the program says about itself — title,
  working directory, shell state, command replay.

The output path, the hot one, is `_on_output`.
"""

import contextlib
import os
import signal
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from mux.panes.cwd import CwdObservation
from mux.panes.exits import Reapable
from mux.panes.launch import Launch
from mux.panes.launch_endpoint import LaunchEndpoint
from mux.panes.ledger import SpawnRecord
from mux.panes.pane_view import OutputSink, PaneView, notice_line
from mux.panes.pty_channel import PtyChannel
from mux.panes.shell_integration import remove_directory
from mux.panes.shell_tracker import ShellReaction, ShellTracker
from mux.protocol.errors import MuxError, PreconditionFailed
from mux.protocol.modes import BRACKETED_PASTE
from mux.protocol.names import CwdSource
from mux.protocol.notices import Notice
from mux.protocol.spawn_options import LaunchKind
from mux.system import proctree
from mux.system.proctree import ProcessTree, working_directory

__all__ = ["Launch", "OutputSink", "Pane", "PaneObserver", "PaneState"]


class PaneState(StrEnum):
    RUNNING = "running"
    EXITED = "exited"
    HELD = "held"  # restored without its process, until started (mux.panes.held)


class PaneObserver(Protocol):
    def pane_resizing(self, pane: "Pane", rows: int, cols: int) -> None:
        """`pane` is about to take this size: a MuxError refuses it (the cells budget)."""

    def pane_changed(self, pane: "Pane", properties: Sequence[str]) -> None: ...
    def pane_exited(self, pane: "Pane") -> None: ...
    def pane_notice(self, pane: "Pane", notice: Notice) -> None: ...
    def pane_held_wanted(self, pane: "Pane", data: bytes | None) -> None:
        """A held pane was attached to (`data` None) or sent input (mux.panes.held)."""


class Pane:
    def __init__(
        self,
        *,
        pane_id: int,
        window: int,
        launch: Launch,
        process: Reapable,
        terminal: PtyChannel,
        view: PaneView,
        shell: ShellTracker,
        observer: PaneObserver,
    ) -> None:
        """Nothing is read before `start`."""
        self.id = pane_id
        self.window = window
        self.launch = launch
        self.pid = process.pid
        self.process = process
        self._start_ticks: int | None = None
        self.terminal = terminal
        self.view = view
        self.shell = shell
        self.state = PaneState.RUNNING
        self.exit_status = 0
        self.shell_dir: Path | None = None  # the launch's integration directory
        self.spawn_record: SpawnRecord | None = None  # None: not from Spawn in this instance
        # application-resurrection/1: the launch's endpoint, and the generation of the
        # application's last durable checkpoint (None: none, or cleared).
        self.endpoint: LaunchEndpoint | None = None
        self.checkpoint_generation: int | None = None
        # Order of the last use by a client (spawn, attach, typed input): what
        # "the most recently used pane" means. Set by the table.
        self.use_order = 0
        self.unseen_notice = ""  # its Notice (mux.lifecycle.unseen_notices)
        self._observer = observer

    def start(self) -> None:
        """Start reading the terminal: the pane is complete and in its table."""
        self.terminal.start(self._on_output)

    # -- the output path ----------------------------------------------------------

    def _on_output(self, data: bytes) -> None:
        """Everything the program writes, in order: history, live clients, what it says
        about itself, its modes, the answers to its questions, then (lazily) the screen."""
        view = self.view
        view.scrollback.append(data)
        view.send_to_sinks(data)
        for event in self.shell.scan(data):
            self._react(self.shell.apply(event))
        view.modes.feed(data)
        rest = view.answer_queries(data, self._answer_program)  # only while detached
        view.queue_for_emulation(rest)

    def _answer_program(self, reply: bytes) -> None:
        if self.terminal.is_open and self.is_running:
            with contextlib.suppress(MuxError):
                self.send_input(reply)

    def _react(self, reaction: ShellReaction | None) -> None:
        if reaction is None:
            return
        if reaction.keys:
            with contextlib.suppress(MuxError):
                self.send_input(reaction.keys)
        if reaction.withdraw_offer and self.endpoint is not None:
            self.endpoint.withdraw_offer()
        if reaction.changed:
            self._observer.pane_changed(self, reaction.changed)
        if reaction.notice is not None:
            self._observer.pane_notice(self, reaction.notice)

    def show_saved_contents(self, data: bytes) -> None:
        """Its old contents after a restore, text and colours only
        (mux.terminal.saved_contents): on the screen and in the history, as if printed.
        Nothing in them is a query, a title or a mode, and the last screenful of lines
        alone decides the screen: only that is emulated (a restore of 500 panes spent
        half its time emulating 2,000 lines each)."""
        view = self.view
        view.scrollback.append(data)
        view.send_to_sinks(data)
        start = len(data)
        for _ in range(view.rows + 1):
            start = data.rfind(b"\r\n", 0, start)
            if start < 0:
                break
        view.queue_for_emulation(data[max(start, 0) :])

    def show_notice(self, text: str) -> None:
        """A line from mux itself, on the screen and in the history, not to the program."""
        self._on_output(notice_line(text, self.cols))

    # -- what is known of it ------------------------------------------------------

    @property
    def master_fd(self) -> int | None:
        """The terminal's fd while it is open (kept open across an upgrade's exec)."""
        return self.terminal.fd

    @property
    def argv(self) -> tuple[str, ...]:
        return self.launch.argv

    @property
    def rows(self) -> int:
        return self.view.rows

    @property
    def cols(self) -> int:
        return self.view.cols

    @property
    def described(self) -> tuple[int, str, int, int]:
        """For the log: id, program, pid, window."""
        return self.id, self.argv[0], self.pid, self.window

    @property
    def is_running(self) -> bool:
        return self.state is PaneState.RUNNING

    @property
    def is_live(self) -> bool:
        """Running, or held until started (mux.panes.held): what clients attach to."""
        return self.state is not PaneState.EXITED

    @property
    def has_process(self) -> bool:
        """False for a pane that holds the place of one not restored (mux.panes.placeholder)."""
        return self.pid > 0

    @property
    def title(self) -> str:
        return self.shell.title

    @property
    def title_explicit(self) -> bool:
        return self.shell.title_explicit

    def set_title(self, title: str) -> None:
        """A title of the user's (SetTitle), kept over the program's; "": the program's."""
        self._react(self.shell.set_title(title))

    def set_program_title(self, title: str) -> None:
        """A title as if the program had set it (OSC 0/2): observers hear of it."""
        self._react(self.shell.program_title(title))

    @property
    def cwd(self) -> str:
        return self.shell.cwd

    @property
    def cwd_source(self) -> CwdSource:
        return self.shell.cwd_source

    @property
    def cwd_captured_at(self) -> float:
        return self.shell.cwd_captured_at

    @property
    def shell_state(self) -> str:
        return self.shell.shell_state

    @property
    def last_command(self) -> str | None:
        return self.shell.last_command

    @property
    def last_command_status(self) -> int | None:
        return self.shell.last_command_status

    def start_ticks(self) -> int | None:
        """When the pane's program started (with its pid, it names the process for good),
        read once: the pid stays this program's until muxd reaps it (every snapshot
        asks, and 500 reads of /proc cost the snapshot ~10 ms)."""
        if self._start_ticks is None:
            self._start_ticks = proctree.start_ticks(self.pid)
        return self._start_ticks

    def sample_cwd(self, processes: ProcessTree) -> None:
        """A process capture: the foreground job's deepest process, else the program."""
        if not self.is_running:
            return
        group = self.terminal.foreground_group()
        target = processes.deepest_in_group(self.pid, group) if group is not None else None
        child = target is not None and target != self.pid
        path = working_directory(target if child and target is not None else self.pid)
        if path is not None:
            self._react(self.shell.observe_cwd(CwdObservation(path, "process", child=child)))

    def snapshot_replay(self, allowlist: Sequence[str] | None) -> tuple[str, int | None] | None:
        """(command line, checkpoint generation) to replay at restore, if any (`allowlist`
        None: whatever program runs, for the restore to decide)."""
        return self.shell.snapshot_replay(
            allowlist,
            shell_launch=self.launch.kind is LaunchKind.SHELL,
            checkpoint_generation=self.checkpoint_generation,
        )

    # -- clients' view ------------------------------------------------------------

    def add_output_sink(self, sink: OutputSink, watching: bool = False) -> None:
        """`sink` hears the output live; while anyone does, it is read promptly.
        `watching`: a read-only client's, which starts no held pane."""
        self.view.add_output_sink(sink)
        self.terminal.read_promptly(True)
        if self.state is PaneState.HELD and not watching:
            self._observer.pane_held_wanted(self, None)

    def remove_output_sink(self, sink: OutputSink) -> None:
        self.view.remove_output_sink(sink)
        self.terminal.read_promptly(self.view.has_sinks)

    def repaint(self) -> bytes:
        return self.view.repaint()

    def cursor_state(self) -> bytes:
        return self.view.cursor_state()

    def screen_lines(self) -> list[str]:
        return self.view.screen_lines()

    def hibernate_screen_if_idle_since(self, cutoff: float) -> bool:
        return self.view.hibernate_if_idle_since(cutoff)

    # -- input and control --------------------------------------------------------

    def _require_terminal(self, action: str) -> None:
        if self.state is PaneState.HELD:
            raise PreconditionFailed(f"pane {self.id} is waiting to start; start it first")
        if self.state is PaneState.EXITED:
            raise PreconditionFailed(
                f"pane {self.id} has exited (status {self.exit_status}); cannot {action}"
            )
        self.terminal.require_open(action)

    def send_input(self, data: bytes) -> None:
        if self.state is PaneState.HELD:
            self._observer.pane_held_wanted(self, data)  # it may start it, or dismiss it
            return
        self._require_terminal("send input")
        self.terminal.send(data)

    @property
    def pastes_bracketed(self) -> bool:
        return BRACKETED_PASTE in self.view.modes.enabled

    @property
    def input_backlog_bytes(self) -> int:
        """Input accepted but not yet taken by the terminal."""
        return self.terminal.input_backlog_bytes

    def when_input_drained(self, callback: Callable[[], None]) -> None:
        """Call `callback` once, when the input backlog is empty (now, if it is)."""
        self.terminal.when_input_drained(callback)

    def resize(self, rows: int, cols: int) -> None:
        if self.state is not PaneState.HELD:  # a held pane's program starts at its size
            self._require_terminal("resize it")
        if (rows, cols) == (self.rows, self.cols):
            return
        self._observer.pane_resizing(self, rows, cols)
        self.view.resize(rows, cols)
        if self.state is not PaneState.HELD:
            self.terminal.set_window_size(rows, cols)
        self._observer.pane_changed(self, ("Rows", "Cols"))

    def foreground_group(self) -> int | None:
        """The terminal's foreground process group, if there is one."""
        return self.terminal.foreground_group()

    def send_signal(self, signum: signal.Signals) -> None:
        if self.state is PaneState.HELD:
            raise PreconditionFailed(f"pane {self.id} is waiting to start; nothing to signal")
        if self.state is PaneState.EXITED:
            raise PreconditionFailed(
                f"pane {self.id} has exited (status {self.exit_status}); cannot signal it"
            )
        foreground = self.terminal.foreground_group()
        pgid = self.pid if foreground is None else foreground  # none: the program's own
        try:
            os.killpg(pgid, signum)
        except ProcessLookupError:
            raise PreconditionFailed(f"pane {self.id} has no process left to signal") from None
        except PermissionError:
            raise PreconditionFailed(
                f"mux may not signal the foreground job of pane {self.id} (it runs as another user)"
            ) from None

    def checkpoint_changed(self, generation: int | None) -> None:
        self.checkpoint_generation = generation
        self._observer.pane_changed(self, ("Checkpoint",))  # not a D-Bus property

    def take_over(self, started: "Pane") -> None:
        """A held pane becomes the pane of a program just started for it (`started`, made
        for this and never published): its process, terminal and launch, this pane's
        identity, view and clients. Reading starts with `start`."""
        assert self.state is PaneState.HELD
        self.launch, self.pid, self.process = started.launch, started.pid, started.process
        self.terminal, self.shell = started.terminal, started.shell
        self.shell_dir = started.shell_dir
        self.spawn_record, self.endpoint = started.spawn_record, started.endpoint
        if self.endpoint is not None:
            self.endpoint.bind(self)
        self.terminal.read_promptly(self.view.has_sinks)  # as its clients need
        self._start_ticks = None
        self.state, self.exit_status = PaneState.RUNNING, 0

    # -- end of life --------------------------------------------------------------

    def freeze(self) -> None:
        """Stop reading the terminal: the stop that follows closes it anyway."""
        self.terminal.stop_reading()

    def process_exited(self, status: int) -> None:
        # First the state: the pid is reaped, nothing may signal it any more.
        self.state = PaneState.EXITED
        self.exit_status = status
        self._remove_shell_dir()
        self._close_endpoint()
        self.terminal.drain()
        self._observer.pane_changed(self, ("State", "ExitStatus"))
        self._observer.pane_exited(self)

    def hang_up(self) -> None:
        """Close the pane like a closed terminal window: SIGHUP to its processes."""
        self.terminal.hang_up(self.pid if self.is_running else None)
        self.view.clear_sinks()
        self._remove_shell_dir()
        self._close_endpoint()

    def _close_endpoint(self) -> None:
        endpoint, self.endpoint = self.endpoint, None
        if endpoint is not None:
            endpoint.close()

    def _remove_shell_dir(self) -> None:
        directory, self.shell_dir = self.shell_dir, None
        remove_directory(directory)
