"""Resurrection at start: every pane of the last snapshot relaunched, honestly.

Processes are recreated, not revived, and each restored pane says so in its
first line. A directory that is gone falls back to $HOME, visibly. A pane
that cannot be started (its program is gone) is reported — log, status, and
ListRestoreProblems over D-Bus — keeps its place in its window as a place
holder that says why, and stays in the snapshot for repair.

At a start, a pane comes back with its own id and window (new ids start above
them; the instance token is new, so an old KillIf still fails). With `restore`
"ask" or "lazy", or a program in `restore_ask_programs`, it comes back held
(mux.panes.held): its old contents and what would run, no process until started.
Whether a shell's command is typed again is decided here, with the settings of
now (mux.panes.replay). A restore from the history keeps nothing of the ids: its
panes start beside what runs, never a second copy of a launch still running.
"""

import logging
import os
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mux.config import RestoreMode
from mux.panes.cwd import CwdObservation
from mux.panes.held import PendingStart
from mux.panes.launch import Launch
from mux.panes.pane import Pane
from mux.panes.placeholder import NotStarted
from mux.panes.replay import CommandReplay, replayable
from mux.panes.restored_marker import restored_marker
from mux.panes.table import PaneTable
from mux.protocol.errors import MuxError, NoSuchPane
from mux.protocol.spawn_options import LaunchKind, SpawnRequest
from mux.protocol.visible import visible
from mux.resurrection.checkpoints import (
    CheckpointProblem,
    CheckpointQuarantined,
    CheckpointStore,
)
from mux.state.restore_layout import lay_out, layout_order, saved_layout, window_of_readopted
from mux.state.schema import PaneSnapshot, Session
from mux.system.proctree import start_ticks

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RestoreProblem:
    pane: PaneSnapshot  # as it was saved, with a fresh id so it cannot clash
    window: int  # a window id of its own, reserved in the same id space
    reason: str
    saved_id: int = 0  # its id in the snapshot it came from (0: not known)


@dataclass(frozen=True)
class RestoreChoices:
    """How a restore brings panes back (from the settings of now, and its caller)."""

    keep_ids: bool = True  # a start: each pane its own id; False: new ids (the history)
    mode: RestoreMode = RestoreMode.ALWAYS
    ask_programs: frozenset[str] = frozenset()  # base names that always wait
    still_held: frozenset[int] = frozenset()  # saved ids that waited before: wait again
    replay_programs: tuple[str, ...] = ()  # replay_commands
    # A pane's old contents (mux.lifecycle.contents_keeper): b"" for none, None for not
    # known yet (no key yet): then `later(invocation, show)` shows them when they are.
    contents: Callable[[PaneSnapshot], bytes | None] = field(default=lambda saved: b"")
    later: Callable[[str, Callable[[bytes], None]], None] = field(
        default=lambda invocation, show: None
    )


def _request(pane: PaneSnapshot, cwd: str, window: int) -> SpawnRequest:
    common = {
        "cwd": cwd,
        "env": pane.env_overrides,
        "title": pane.title if pane.title_explicit else None,
        "window": window,
        "rows": pane.rows,
        "cols": pane.cols,
        "invocation": pane.invocation,
    }
    if pane.kind is LaunchKind.SHELL:
        return SpawnRequest(kind=LaunchKind.SHELL, shell=pane.program or pane.argv[0], **common)  # type: ignore[arg-type]
    return SpawnRequest(
        kind=LaunchKind.EXPLICIT,
        argv=tuple(pane.argv),
        program=pane.program,
        **common,  # type: ignore[arg-type]
    )


def _checkpoint_offer(
    checkpoints: CheckpointStore | None, saved: PaneSnapshot, notes: list[str]
) -> str | None:
    """The reference the relaunched application gets back; None (with a visible note and
    a log line) when its checkpoint is missing or not its own. Never another's state;
    the file is left as it is, unless it is malformed: then it is in the quarantine."""
    ref = saved.checkpoint
    if ref is None or checkpoints is None:
        return None
    why, kept = "", "the file is left as it was"
    try:
        if ref.invocation != saved.invocation:
            raise CheckpointProblem("the snapshot names another invocation's checkpoint")
        record = checkpoints.read(ref.invocation)
        if record.generation < ref.generation:
            raise CheckpointProblem("the checkpoint file is older than the snapshot says")
    except FileNotFoundError:
        why = "its checkpoint is missing"
    except CheckpointQuarantined as e:
        why, kept = str(e), f"the file was moved to the quarantine as {e.moved_as}"
    except (CheckpointProblem, OSError) as e:
        why = str(e) if isinstance(e, CheckpointProblem) else "its checkpoint cannot be read"
    else:
        return record.reference
    log.error("pane %d (%s): not resumed: %s", saved.id, saved.argv[0], why)
    notes.append(f"mux: the application starts afresh: {why} ({kept})")
    return None


def _still_running(saved: PaneSnapshot) -> bool:
    if saved.pid is None or saved.start_ticks is None:
        return False
    return start_ticks(saved.pid) == saved.start_ticks


def restore_session(
    table: PaneTable,
    session: Session,
    home: str,
    checkpoints: CheckpointStore | None,
    *,
    only: set[int] | None = None,
    choices: RestoreChoices | None = None,
) -> list[RestoreProblem]:
    """Start the saved panes again, each window with its panes in their places; a pane
    that cannot be started keeps its place as a place holder (mux.panes.placeholder).
    `checkpoints`: where applications' references are (None: the resurrection adapter
    is off); `only`: the ids of the panes to restore (None: all; after a crash, those
    not re-adopted: they go back into the window the others are in)."""
    choices = choices or RestoreChoices(replay_programs=tuple(table.settings.replay_commands))
    saved_at = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(session.saved_at))
    panes = {pane.id: pane for pane in session.panes}
    if choices.keep_ids:
        table.ids.reserve(panes, (window.id for window in session.windows))
    problems: list[RestoreProblem] = []
    for window in session.windows:
        layout = saved_layout(window)
        order = layout_order(layout, only)
        if not order:
            continue
        # After a crash, into the window of its re-adopted panes; from the history, never.
        live_window = window_of_readopted(table, layout, set(order)) if choices.keep_ids else 0
        if choices.keep_ids and not live_window:
            live_window = window.id if window.id not in table.windows else 0
        placed: dict[int, int] = {}  # saved pane id -> the id it has now
        for pane_id in order:
            saved = panes[pane_id]
            restored = _restore_pane(
                table,
                saved,
                live_window,
                _Context(saved_at, home, checkpoints, choices),
            )
            if isinstance(restored, RestoreProblem):
                problems.append(restored)
                placed[pane_id], live_window = restored.pane.id, restored.window
            else:
                placed[pane_id], live_window = restored.id, restored.window
        lay_out(table, window, layout, placed, live_window, readopted=choices.keep_ids)
    return problems


@dataclass(frozen=True)
class _Context:
    saved_at: str  # the snapshot's time, for the notes
    home: str
    checkpoints: CheckpointStore | None
    choices: RestoreChoices


def _restore_pane(
    table: PaneTable, saved: PaneSnapshot, window: int, context: _Context
) -> Pane | RestoreProblem:
    choices = context.choices
    kept = _own_ids(table, saved, window, choices)
    if _still_running(saved):
        reason = (
            f"it still runs (pid {saved.pid}) from before mux stopped; it was not started "
            "a second time"
        )
        return _not_restored(table, saved, reason, window=window, kept=kept, choices=choices)
    notes = [
        f"mux: restored from the snapshot of {context.saved_at}: a new process, not the old one"
    ]
    cwd = saved.cwd.path
    if not os.path.isdir(cwd):
        notes.append(f"mux: {visible(cwd)} no longer exists; started in {context.home} instead")
        cwd = context.home
    offer = _checkpoint_offer(context.checkpoints, saved, notes)
    replay = _replay(saved, choices)
    if replay is not None:
        notes.append(f"mux: typing again at the first prompt: {visible(replay)}")
    request = _request(saved, cwd, 0 if kept else window)
    contents = choices.contents(saved)
    if _waits(saved, choices):
        shown = _Shown(notes, contents, offer)
        return _hold(table, saved, request, shown, kept=kept, window=window, choices=choices)
    try:
        # Never refused by the cells budget: a restored pane counts, but losing it to a
        # lowered budget would be worse than going over it (docs/security.md#limits).
        pane = table.spawn(
            request,
            notice=None if contents else "\r\n".join(notes),
            offer=offer,
            budgeted=False,
            kept=kept,
        )
    except Exception as e:  # whatever it is, the other panes still come back
        reason = e.message if isinstance(e, MuxError) else f"it could not be started ({e})"
        return _not_restored(
            table, saved, reason, window=window, kept=kept, choices=choices, contents=contents
        )
    if contents:
        pane.show_saved_contents(contents)
        _after_contents(pane, notes)
    elif contents is None:
        choices.later(saved.invocation, lambda late: _show_late(pane, late))
    _after_start(pane, saved, replay)
    return pane


@dataclass(frozen=True)
class _Shown:
    """What a restored pane shows besides its program's output."""

    notes: list[str]  # "mux: restored from the snapshot of ...", then any more
    contents: bytes | None  # its old contents (None: not known yet)
    offer: str | None


def _after_contents(pane: Pane, notes: list[str]) -> None:
    """Below the old contents: the marker, then the notes beyond "restored from"."""
    now = time.strftime("%Y-%m-%d %H:%M", time.localtime())
    program = os.path.basename(pane.argv[0])
    pane.show_saved_contents(restored_marker(now, program, pane.cols))
    if notes[1:]:
        pane.show_notice("\r\n".join(notes[1:]))


def _show_late(pane: Pane, contents: bytes) -> None:
    """The old contents of a pane restored before the key came (a locked keyring)."""
    if pane.is_live:
        pane.show_saved_contents(b"\x1b[0m\r\n" + contents)
        _after_contents(pane, [])


def _own_ids(
    table: PaneTable, saved: PaneSnapshot, window: int, choices: RestoreChoices
) -> tuple[int, int] | None:
    """(pane id, window id) a pane comes back with at a start: its own, in the window its
    restore is filling (a new window when its own id is taken); None: new ids."""
    if not choices.keep_ids:
        return None
    try:
        table.get(saved.id)
    except NoSuchPane:
        return saved.id, window or table.ids.new_window_id()
    return None


def _replay(saved: PaneSnapshot, choices: RestoreChoices) -> str | None:
    """The command typed again at the shell's first prompt, by the settings of now."""
    checkpointed = saved.checkpoint is not None
    if saved.kind is LaunchKind.SHELL and replayable(
        saved.replay, checkpointed, choices.replay_programs
    ):
        return saved.replay
    return None


def _after_start(pane: Pane, saved: PaneSnapshot, replay: str | None) -> None:
    if replay is not None and pane.launch.kind is LaunchKind.SHELL:
        generation = saved.checkpoint.generation if saved.checkpoint else None
        pane.shell.replay = CommandReplay(replay, generation)
    if not saved.title_explicit:
        # The title the program had set: observers hear of it like of any other.
        pane.set_program_title(saved.title)


def _waits(saved: PaneSnapshot, choices: RestoreChoices) -> bool:
    if saved.id in choices.still_held or choices.mode in (RestoreMode.ASK, RestoreMode.LAZY):
        return True
    return _program_name(saved) in choices.ask_programs


def _program_name(saved: PaneSnapshot) -> str:
    """The base name that restore_ask_programs matches: the program, or for a shell that
    types a command again, that command's."""
    if saved.kind is LaunchKind.SHELL and saved.replay:
        try:
            words = shlex.split(saved.replay)
        except ValueError:
            words = []
        if words:
            return os.path.basename(words[0])
    return os.path.basename(saved.argv[0])


def _hold(
    table: PaneTable,
    saved: PaneSnapshot,
    request: SpawnRequest,
    shown: _Shown,
    *,
    kept: tuple[int, int] | None,
    window: int,
    choices: RestoreChoices,
) -> Pane:
    """The pane held, with its old contents and what would run, until started."""
    asks = choices.mode is not RestoreMode.LAZY or _program_name(saved) in choices.ask_programs
    replay = _replay(saved, choices)
    what = " ".join(shlex.quote(word) for word in saved.argv)
    # From a saved file: written into the pane, so its controls are shown, not obeyed.
    lines = [f"mux: waiting to start: {visible(what)}", f"mux: in {visible(request.cwd or '')}"]
    notes, contents, offer = shown.notes, shown.contents, shown.offer
    if offer is not None:
        lines.append("mux: the application resumes from its checkpoint")
    if replay is not None:
        lines.append(f"mux: then types again at the first prompt: {visible(replay)}")
    if asks:
        lines.append("mux: press Enter to start it, Ctrl-D to dismiss it")
    else:
        lines.append("mux: it starts when you attach to it or type into it")

    def started(pane: Pane) -> None:
        if contents:
            _after_contents(pane, notes)
        _after_start(pane, saved, replay)

    pending = PendingStart(
        request,
        waiting="\r\n".join(lines),
        notice="" if contents else "\r\n".join(notes),
        offer=offer,
        asks=asks,
        started=started,
        saved=saved,
    )
    held = _held(saved, "", contents or b"")
    try:
        pane = table.hold_place(held, window, kept, pending)
    except MuxError:  # its window is full (MAX_DEPTH): a window of its own
        pane = table.hold_place(held, 0, None, pending)
    if contents is None:
        choices.later(saved.invocation, lambda late: _show_late(pane, late))
    log.debug("pane %d (%s) waits to be started", pane.id, saved.argv[0])  # (one line for all)
    return pane


def _not_restored(
    table: PaneTable,
    saved: PaneSnapshot,
    reason: str,
    *,
    window: int,
    kept: tuple[int, int] | None,
    choices: RestoreChoices,
    contents: bytes | None = b"",
) -> RestoreProblem:
    """The problem, with a place holder in `window` (0: a new one) under whose id it is
    kept in the snapshot until it is repaired or given up; its old contents above why."""
    log.error("pane %d (%s) was not restored: %s", saved.id, saved.argv[0], reason)
    held = _held(saved, reason, contents or b"")
    try:
        holder = table.hold_place(held, window, kept)
    except MuxError:  # its window is full (MAX_DEPTH): a window of its own
        holder = table.hold_place(held, 0)
    kept_as = saved.model_copy(update={"id": holder.id})
    return RestoreProblem(kept_as, holder.window, reason, saved_id=saved.id)


def _held(saved: PaneSnapshot, reason: str, contents: bytes) -> NotStarted:
    cwd = CwdObservation(saved.cwd.path, saved.cwd.source, saved.cwd.captured_at)
    return NotStarted(
        Launch.saved(saved),
        saved.title,
        saved.title_explicit,
        cwd,
        saved.rows,
        saved.cols,
        reason,
        contents,
    )
