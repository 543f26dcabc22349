"""Resurrection at start: every pane of the last snapshot relaunched, honestly.

Processes are recreated, not revived, and each restored pane says so in its
first line. A directory that is gone falls back to $HOME, visibly. A pane
that cannot be started (its program is gone) is reported — log, status, and
ListRestoreProblems over D-Bus — keeps its place in its window as a place
holder that says why, and stays in the snapshot for repair.
"""

import logging
import os
import time
from dataclasses import dataclass

from mux.panes.cwd import CwdObservation
from mux.panes.launch import Launch
from mux.panes.pane import Pane
from mux.panes.placeholder import NotStarted
from mux.panes.replay import CommandReplay
from mux.panes.table import PaneTable
from mux.protocol.errors import MuxError
from mux.protocol.layout import Leaf, Node, Split, panes_of, with_panes_renamed, without_pane
from mux.protocol.spawn_options import LaunchKind, SpawnRequest
from mux.resurrection.checkpoints import (
    CheckpointProblem,
    CheckpointQuarantined,
    CheckpointStore,
)
from mux.state.schema import LayoutNode, PaneSnapshot, Session, WindowSnapshot
from mux.system.proctree import start_ticks

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RestoreProblem:
    pane: PaneSnapshot  # as it was saved, with a fresh id so it cannot clash
    window: int  # a window id of its own, reserved in the same id space
    reason: str
    saved_id: int = 0  # its id in the snapshot it came from (0: not known)


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
    only: set[int] | None = None,
) -> list[RestoreProblem]:
    """Start the saved panes again, each window with its panes in their places; a pane
    that cannot be started keeps its place as a place holder (mux.panes.placeholder).
    `checkpoints`: where applications' references are (None: the resurrection adapter
    is off); `only`: the ids of the panes to restore (None: all; after a crash, those
    not re-adopted: they go back into the window the others are in)."""
    saved_at = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(session.saved_at))
    panes = {pane.id: pane for pane in session.panes}
    problems: list[RestoreProblem] = []
    for window in session.windows:
        layout = saved_layout(window)
        order = [pane for pane in panes_of(layout) if only is None or pane in only]
        if not order:
            continue
        live_window = _window_of_readopted(table, layout, set(order))
        placed: dict[int, int] = {}  # saved pane id -> the id it has now
        for pane_id in order:
            saved = panes[pane_id]
            restored = _restore_pane(
                table, saved, live_window, saved_at=saved_at, home=home, checkpoints=checkpoints
            )
            if isinstance(restored, RestoreProblem):
                problems.append(restored)
                placed[pane_id], live_window = restored.pane.id, restored.window
            else:
                placed[pane_id], live_window = restored.id, restored.window
        _lay_out(table, window, layout, placed, live_window)
    return problems


def _window_of_readopted(table: PaneTable, layout: Node, restoring: set[int]) -> int:
    """After a crash: the window the re-adopted panes of a saved window are in (they
    kept their ids); 0 (a new window) when none of them is."""
    for pane_id in panes_of(layout):
        if pane_id not in restoring:
            window = table.windows.window_of(pane_id)
            if window is not None:
                return window
    return 0


def _restore_pane(
    table: PaneTable,
    saved: PaneSnapshot,
    window: int,
    *,
    saved_at: str,
    home: str,
    checkpoints: CheckpointStore | None,
) -> Pane | RestoreProblem:
    if _still_running(saved):
        reason = (
            f"it still runs (pid {saved.pid}) from before mux stopped; it was not started "
            "a second time"
        )
        return _not_restored(table, saved, reason, window)
    notes = [f"mux: restored from the snapshot of {saved_at}: a new process, not the old one"]
    cwd = saved.cwd.path
    if not os.path.isdir(cwd):
        notes.append(f"mux: {cwd} no longer exists; started in {home} instead")
        cwd = home
    offer = _checkpoint_offer(checkpoints, saved, notes)
    if saved.replay is not None:
        notes.append(f"mux: typing again at the first prompt: {saved.replay}")
    try:
        # Never refused by the cells budget: a restored pane counts, but losing it to a
        # lowered budget would be worse than going over it (docs/security.md#limits).
        pane = table.spawn(
            _request(saved, cwd, window),
            notice="\r\n".join(notes),
            offer=offer,
            budgeted=False,
        )
    except Exception as e:  # whatever it is, the other panes still come back
        reason = e.message if isinstance(e, MuxError) else f"it could not be started ({e})"
        return _not_restored(table, saved, reason, window)
    if saved.replay is not None and pane.launch.kind is LaunchKind.SHELL:
        generation = saved.checkpoint.generation if saved.checkpoint else None
        pane.shell.replay = CommandReplay(saved.replay, generation)
    if not saved.title_explicit:
        # The title the program had set: observers hear of it like of any other.
        pane.set_program_title(saved.title)
    return pane


def _not_restored(
    table: PaneTable, saved: PaneSnapshot, reason: str, window: int
) -> RestoreProblem:
    """The problem, with a place holder in `window` (0: a new one) under whose id it is
    kept in the snapshot until it is repaired or given up."""
    log.error("pane %d (%s) was not restored: %s", saved.id, saved.argv[0], reason)
    held = _held(saved, reason)
    try:
        holder = table.hold_place(held, window)
    except MuxError:  # its window is full (MAX_DEPTH): a window of its own
        holder = table.hold_place(held, 0)
    kept = saved.model_copy(update={"id": holder.id})
    return RestoreProblem(kept, holder.window, reason, saved_id=saved.id)


def _held(saved: PaneSnapshot, reason: str) -> NotStarted:
    cwd = CwdObservation(saved.cwd.path, saved.cwd.source, saved.cwd.captured_at)
    return NotStarted(
        Launch.saved(saved), saved.title, saved.title_explicit, cwd, saved.rows, saved.cols, reason
    )


def saved_layout(window: WindowSnapshot) -> Node:
    """The tree of a window's table of nodes (checked when the snapshot was read)."""
    nodes = {node.id: node for node in window.nodes}
    return _tree(nodes, window.root)


def _tree(nodes: dict[int, LayoutNode], node_id: int) -> Node:
    node = nodes[node_id]
    if node.kind == "pane":
        assert node.pane is not None
        return Leaf(node.pane)
    assert node.direction is not None
    children = tuple(_tree(nodes, child) for child in node.children)
    return Split(node.direction, tuple(node.ratios), children)


def _lay_out(
    table: PaneTable, window: WindowSnapshot, layout: Node, placed: dict[int, int], live: int
) -> None:
    """The panes in the places their window had saved for them (`placed`: saved id ->
    id now, restored or holding the place; after a crash the re-adopted panes of
    window `live` keep their ids and places)."""
    present = set(table.windows.get(live).panes)
    for pane in panes_of(layout):
        if pane not in placed and pane not in present:
            pruned = without_pane(layout, pane)
            assert pruned is not None  # (some pane of the window was placed)
            layout = pruned
    ids_now = {pane: placed.get(pane, pane) for pane in panes_of(layout)}
    renamed = with_panes_renamed(layout, ids_now)
    focus = placed.get(window.focused_pane, window.focused_pane)
    table.windows.take_saved(live, renamed, focus, window.title, window.geometry or {})
