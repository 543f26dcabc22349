"""What a pane's program tells its terminal about itself: title, directory, shell state.

Fed the OSC events of the pane's output (mux.protocol.osc), it keeps the title
(OSC 0/2; never over an explicit title), the working directory with its source
and the precedence of panes/cwd.py
(docs/shell-integration.md#working-directory-sources-and-precedence), and,
from the OSC 133 markers of an integrated shell, the shell's state and its last
command and status (docs/shell-integration.md#osc-sequences-mux-reads). A
marker counts only with the launch's token. It also steps a restored shell's
command replay (panes/replay.py).

No I/O: each event is answered with what the pane must do about it (a
`ShellReaction`): tell observers which properties changed, type keys, withdraw
an application's offer.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from mux.panes.cwd import CwdObservation, supersedes
from mux.panes.replay import CommandReplay, Step, replayable
from mux.protocol.names import CwdSource
from mux.protocol.notices import AppNotification, CommandFinished, Notice
from mux.protocol.osc import CwdReport, OscEvent, OscScanner, ShellMarker, TitleChange
from mux.protocol.visible import without_controls

TITLE_CHANGED = ("Title",)
CWD_CHANGED = ("Cwd", "CwdSource")


@dataclass(frozen=True)
class ShellReaction:
    changed: tuple[str, ...] = ()  # the pane's properties that changed
    keys: bytes = b""  # to type into the terminal (a replayed command)
    withdraw_offer: bool = False  # the user moved on: the application's offer goes
    notice: Notice | None = None  # for the user, if nobody is looking (mux.desktop)


class ShellTracker:
    def __init__(
        self,
        *,
        title: str,
        title_explicit: bool,
        cwd: CwdObservation,
        local_hosts: frozenset[str] = frozenset(),
        shell_token: str | None = None,
        replay: CommandReplay | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`cwd`: where the program started (or was, as handed over); `local_hosts`: the
        names OSC 7 may give this machine; `shell_token`: what the shell integration of
        this launch marks its OSC 133 markers with; `replay`: a command to type again."""
        self._osc = OscScanner(local_hosts)
        # Every title a pane has passes here (a Spawn title, a program's base name, one
        # restored or handed over from an older muxd): none keeps C0, DEL or C1.
        self.title = without_controls(title)
        self.title_explicit = title_explicit
        self._program_title: str | None = None  # the last the program set, explicit or not
        self.cwd = cwd.path
        self.cwd_source: CwdSource = cwd.source
        self.cwd_captured_at = cwd.captured_at
        self._cwd_from_child = cwd.child
        self.shell_token = shell_token
        self.replay = replay
        # The shell's state from its OSC 133 markers: "prompt", "command" or "" (unknown).
        self.shell_state = ""
        self.last_command: str | None = None
        self.last_command_status: int | None = None
        self._clock = clock  # how long a command ran, for CommandFinished
        self._command_started: float | None = None

    def scan(self, data: bytes) -> list[OscEvent]:
        """The OSC events completed by `data` (a sequence may span several reads)."""
        return self._osc.feed(data)

    def apply(self, event: OscEvent) -> ShellReaction | None:
        if isinstance(event, TitleChange):
            return self.program_title(event.title)
        if isinstance(event, CwdReport):
            return self.observe_cwd(CwdObservation(event.path, "shell"))
        if isinstance(event, AppNotification):
            return ShellReaction(notice=event)
        if self.shell_token is not None and event.token == self.shell_token:
            # Without the launch's token, a marker is only output that looks like one.
            return self._on_marker(event)
        return None

    def program_title(self, title: str) -> ShellReaction | None:
        """A title the program set (or had set, before a restore): an explicit one stays."""
        title = without_controls(title)
        self._program_title = title
        if self.title_explicit or title == self.title:
            return None
        self.title = title
        return ShellReaction(changed=TITLE_CHANGED)

    def set_title(self, title: str) -> ShellReaction | None:
        """An explicit title (kept over the program's); "": none, the program's last
        title again (if it set none, the title stays until it does)."""
        title = without_controls(title)
        self.title_explicit = bool(title)
        if not title:
            title = self._program_title if self._program_title is not None else self.title
        if title == self.title:
            return None
        self.title = title
        return ShellReaction(changed=TITLE_CHANGED)

    def observe_cwd(self, observation: CwdObservation) -> ShellReaction | None:
        current = CwdObservation(
            self.cwd, self.cwd_source, self.cwd_captured_at, child=self._cwd_from_child
        )
        if not supersedes(observation, current, shell_at_prompt=self.shell_state == "prompt"):
            return None
        changed = (observation.path, observation.source) != (self.cwd, self.cwd_source)
        self.cwd, self.cwd_source = observation.path, observation.source
        self.cwd_captured_at = observation.captured_at
        self._cwd_from_child = observation.child
        return ShellReaction(changed=CWD_CHANGED) if changed else None

    def _on_marker(self, marker: ShellMarker) -> ShellReaction | None:
        reaction = None
        if self.replay is not None:
            reaction = self._replay_step(self.replay, self.replay.marker(marker.kind))
        if marker.kind in ("A", "B"):
            self.shell_state = "prompt"
        elif marker.kind == "C":
            self.shell_state = "command"
            self.last_command = marker.command
            self.last_command_status = None
            self._command_started = self._clock()
        elif marker.kind == "D":
            self.last_command_status = marker.status
            started, self._command_started = self._command_started, None
            if started is not None:
                finished = CommandFinished(
                    self.last_command or "", marker.status, self._clock() - started
                )
                reaction = replace(reaction or ShellReaction(), notice=finished)
        return reaction

    def _replay_step(self, replay: CommandReplay, step: Step | None) -> ShellReaction | None:
        if step is Step.TYPE:
            return ShellReaction(keys=replay.command.encode() + b"\r")
        if step is Step.WITHDRAW:
            self.replay = None
            return ShellReaction(withdraw_offer=True)
        return None

    def snapshot_replay(
        self,
        allowlist: Sequence[str] | None,
        *,
        shell_launch: bool,
        checkpoint_generation: int | None,
    ) -> tuple[str, int | None] | None:
        """(command line, checkpoint generation) to replay at restore, if any."""
        replay = self.replay
        if replay is not None and replay.pending:
            return replay.command, replay.checkpoint_generation
        if self.shell_state != "command" or not shell_launch:
            return None
        checkpointed = checkpoint_generation is not None
        if not replayable(self.last_command, checkpointed, allowlist):
            return None
        assert self.last_command is not None
        return self.last_command, checkpoint_generation
