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

from mux.panes.pane import Pane
from mux.panes.replay import CommandReplay
from mux.panes.table import PaneTable
from mux.protocol.errors import MuxError
from mux.protocol.layout import Leaf, Node, Split, panes_of, with_panes_renamed, without_pane
from mux.protocol.spawn_options import LaunchKind, SpawnRequest
from mux.resurrection.checkpoints import CheckpointProblem, CheckpointStore
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
        restored: dict[int, Pane] = {}  # saved pane id -> the pane restored
        layout = saved_layout(window)
        order = list(panes_of(layout))
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
                problems.append(_not_restored(table, saved, reason))
                continue
            new_window = next(iter(restored.values())).window if restored else 0
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
                problems.append(_not_restored(table, saved, reason))
                continue
            if saved.replay is not None and pane.launch.kind is LaunchKind.SHELL:
                generation = saved.checkpoint.generation if saved.checkpoint else None
                pane.shell.replay = CommandReplay(saved.replay, generation)
            if not saved.title_explicit:
                # The title the program had set: observers hear of it like of any other.
                pane.set_program_title(saved.title)
            restored[pane_id] = pane
        if restored:
            _lay_out(table, window, layout, restored, problems)
    return problems


def _not_restored(table: PaneTable, saved: PaneSnapshot, reason: str) -> RestoreProblem:
    """The problem kept (in the snapshot, under fresh ids) until it is repaired."""
    log.error("pane %d (%s) was not restored: %s", saved.id, saved.argv[0], reason)
    kept = saved.model_copy(update={"id": table.ids.new_pane_id()})
    return RestoreProblem(kept, table.ids.new_window_id(), reason, saved_id=saved.id)


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
    table: PaneTable,
    window: WindowSnapshot,
    layout: Node,
    restored: dict[int, Pane],
    problems: list[RestoreProblem],
) -> None:
    """The restored panes in the places their window had saved for them; a pane that
    did not come back leaves its place to its sibling, and says so in that window."""
    gone = [pane for pane in panes_of(layout) if pane not in restored]
    for pane in gone:
        pruned = without_pane(layout, pane)
        assert pruned is not None  # (some pane of the window was restored)
        layout = pruned
    renamed = with_panes_renamed(layout, {old: new.id for old, new in restored.items()})
    focus = restored.get(window.focused_pane)
    first = next(iter(restored.values()))
    table.windows.take_saved(
        first.window,
        renamed,
        focus.id if focus is not None else first.id,
        window.title,
        window.geometry or {},
    )
    by_saved_id = {problem.saved_id: problem for problem in problems}
    for pane in gone:
        problem = by_saved_id.get(pane)
        if problem is not None:
            first.show_notice(
                f"mux: pane {pane} of this window ({problem.pane.argv[0]}) was not restored: "
                f"{problem.reason} (muxctl problems)"
            )
