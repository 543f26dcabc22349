"""Resurrection at start: every pane of the last snapshot relaunched, honestly.

Processes are recreated, not revived, and each restored pane says so in its
first line. A directory that is gone falls back to $HOME, visibly. A pane
that cannot be started (its program is gone) is reported — log, status, and
ListRestoreProblems over D-Bus — and stays in the snapshot for repair.
"""

import logging
import os
import time
from dataclasses import dataclass

from mux.panes.replay import CommandReplay
from mux.panes.table import PaneTable
from mux.protocol.errors import MuxError
from mux.protocol.spawn_options import LaunchKind, SpawnRequest
from mux.resurrection.checkpoints import CheckpointProblem, CheckpointStore
from mux.state.schema import PaneSnapshot, Session
from mux.system.proctree import start_ticks

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RestoreProblem:
    pane: PaneSnapshot  # as it was saved, with a fresh id so it cannot clash
    window: int  # a window id of its own, reserved in the same id space
    reason: str


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
    the file is left as it is."""
    ref = saved.checkpoint
    if ref is None or checkpoints is None:
        return None
    why = ""
    try:
        if ref.invocation != saved.invocation:
            raise CheckpointProblem("the snapshot names another invocation's checkpoint")
        record = checkpoints.read(ref.invocation)
        if record.generation < ref.generation:
            raise CheckpointProblem("the checkpoint file is older than the snapshot says")
    except FileNotFoundError:
        why = "its checkpoint is missing"
    except (CheckpointProblem, OSError) as e:
        why = str(e) if isinstance(e, CheckpointProblem) else "its checkpoint cannot be read"
    else:
        return record.reference
    log.error("pane %d (%s): not resumed: %s", saved.id, saved.argv[0], why)
    notes.append(f"mux: the application starts afresh: {why} (the file is left as it was)")
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
    only: set[int] | None = None,
) -> list[RestoreProblem]:
    """Start the saved panes again; `checkpoints`: where applications' references are
    (None: the resurrection adapter is off); `only`: the ids of the panes to restore
    (None: all)."""
    saved_at = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(session.saved_at))
    panes = {pane.id: pane for pane in session.panes}
    problems: list[RestoreProblem] = []
    for window in session.windows:
        new_window = 0  # the first pane restored opens the window
        order = [node.pane for node in window.nodes if node.kind == "pane"]
        if only is not None:
            order = [pane_id for pane_id in order if pane_id in only]
        for pane_id in order:
            assert pane_id is not None
            saved = panes[pane_id]
            if _still_running(saved):
                reason = (
                    f"it still runs (pid {saved.pid}) from before mux stopped; it was not "
                    "started a second time"
                )
                log.error("pane %d (%s) was not restored: %s", saved.id, saved.argv[0], reason)
                kept = saved.model_copy(update={"id": table.ids.new_pane_id()})
                problems.append(RestoreProblem(kept, table.ids.new_window_id(), reason))
                continue
            notes = [
                f"mux: restored from the snapshot of {saved_at}: a new process, not the old one"
            ]
            cwd = saved.cwd.path
            if not os.path.isdir(cwd):
                notes.append(f"mux: {cwd} no longer exists; started in {home} instead")
                cwd = home
            offer = _checkpoint_offer(checkpoints, saved, notes)
            if saved.replay is not None:
                notes.append(f"mux: typing again at the first prompt: {saved.replay}")
            try:
                pane = table.spawn(
                    _request(saved, cwd, new_window), notice="\r\n".join(notes), offer=offer
                )
            except Exception as e:  # whatever it is, the other panes still come back
                reason = e.message if isinstance(e, MuxError) else f"it could not be started ({e})"
                log.error("pane %d (%s) was not restored: %s", saved.id, saved.argv[0], reason)
                kept = saved.model_copy(update={"id": table.ids.new_pane_id()})
                problems.append(RestoreProblem(kept, table.ids.new_window_id(), reason))
                continue
            if saved.replay is not None and pane.launch.kind is LaunchKind.SHELL:
                generation = saved.checkpoint.generation if saved.checkpoint else None
                pane.shell.replay = CommandReplay(saved.replay, generation)
            if not saved.title_explicit:
                # The title the program had set: observers hear of it like of any other.
                pane.set_program_title(saved.title)
            new_window = pane.window
    return problems
