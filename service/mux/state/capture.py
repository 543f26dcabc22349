"""The session as a snapshot: what the pane table holds, in the schema's terms.

Exited panes are not part of it (an exited pane is never resurrected, docs/dbus-api.md):
a window is saved with its layout without them (their space to their siblings, as
when a pane closes) and, when one of them had the focus, the focus on the pane
before it in the tree. A window with no running pane is not saved. The exception
is a place holder of a pane not restored (mux.panes.placeholder): the saved pane it
stands for is kept in its place, to be tried again.

The models are built with `model_construct`, unvalidated: every value comes from
mux's own pane table, already of the schema's types, and validating 500 panes cost
a quarter of a snapshot; the session's own rules (check_session) are still checked,
and a file is validated whole when it is read. A `SnapshotCache` keeps each pane's
and window's model from one capture to the next, and makes one again only when
something it is made of has changed.
"""

import time
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Protocol, TypeVar

from pydantic import BaseModel

from mux.panes.pane import Pane
from mux.panes.windows import Window, Windows
from mux.protocol.layout import Leaf, Node, without_pane
from mux.protocol.spawn_options import LaunchKind
from mux.state.schema import (
    CheckpointRef,
    CwdRecord,
    LayoutNode,
    PaneSnapshot,
    Session,
    WindowSnapshot,
    check_session,
)
from mux.system.remade import Remade
from mux.system.steps import Steps, all_at_once

# Every model made here is given every field: they share one set of their field names
# as their "fields set" (model_construct would make each its own: 216-728 bytes a
# model, 2.4 KiB for a pane and its window in the SnapshotCache). The models are
# frozen, and pydantic copies the set before it ever adds to it (model_copy).
_ALL_FIELDS: dict[type[BaseModel], set[str]] = {
    model: set(model.model_fields)
    for model in (PaneSnapshot, CwdRecord, CheckpointRef, WindowSnapshot, LayoutNode)
}


def pane_snapshot(pane: Pane, replay_allowlist: Sequence[str] | None = ()) -> PaneSnapshot:
    return _pane_snapshot(pane, _replay_of(pane, replay_allowlist))


def _replay_of(pane: Pane, replay_allowlist: Sequence[str] | None) -> tuple[str | None, int | None]:
    """(command to replay, checkpoint generation kept). A shell pane's checkpoint is
    only kept with the command to replay: without it, whoever started next at the
    prompt would be handed someone else's state."""
    if pane.launch.kind is not LaunchKind.SHELL:
        return None, pane.checkpoint_generation
    replayed = pane.snapshot_replay(replay_allowlist)
    return replayed if replayed is not None else (None, None)


def _pane_snapshot(pane: Pane, replayed: tuple[str | None, int | None]) -> PaneSnapshot:
    replay, generation = replayed
    # Every field given: model_construct copies a default for each one left out,
    # which was a fifth of a snapshot's time (profiled, 512 panes).
    return PaneSnapshot.model_construct(
        _ALL_FIELDS[PaneSnapshot],
        id=pane.id,
        **pane.launch.snapshot_fields(),
        program_error=None,  # (a running pane's program was found)
        cwd=CwdRecord.model_construct(
            _ALL_FIELDS[CwdRecord],
            path=pane.cwd,
            source=pane.cwd_source,
            captured_at=pane.cwd_captured_at,
        ),
        title=pane.title,
        title_explicit=pane.title_explicit,
        rows=pane.rows,
        cols=pane.cols,
        checkpoint=(
            CheckpointRef.model_construct(
                _ALL_FIELDS[CheckpointRef], invocation=pane.launch.invocation, generation=generation
            )
            if generation is not None
            else None
        ),
        replay=replay,
        pid=pane.pid,
        start_ticks=pane.start_ticks(),
    )


def window_snapshot(window: Window, saved: Collection[int]) -> WindowSnapshot:
    """`window` over the panes in `saved` (its running panes; at least one)."""
    layout: Node | None = window.layout
    order = window.panes
    for pane in order:
        if pane not in saved:
            layout = without_pane(layout, pane) if layout is not None else None
    assert layout is not None, "a window is saved only with a pane to save"
    focus = window.focused_pane
    if focus not in saved:
        before = [pane for pane in order[: order.index(focus)] if pane in saved]
        focus = before[-1] if before else next(p for p in order if p in saved)
    return WindowSnapshot.model_construct(
        _ALL_FIELDS[WindowSnapshot],
        id=window.id,
        title=window.title,
        geometry=dict(window.geometry) or None,
        nodes=layout_nodes(layout),
        root=1,
        focused_pane=focus,
    )


def layout_nodes(layout: Node) -> list[LayoutNode]:
    """The tree as the snapshot's table of nodes, numbered from 1 (the root) in tree
    order."""
    nodes: list[LayoutNode | None] = []
    _number(layout, nodes)
    return [node for node in nodes if node is not None]


def _number(node: Node, nodes: list[LayoutNode | None]) -> int:
    """Appends `node`'s subtree to `nodes`; returns `node`'s id. (Recursion is bounded:
    a layout is at most mux.protocol.layout.MAX_DEPTH deep.)"""
    node_id = len(nodes) + 1
    if isinstance(node, Leaf):
        nodes.append(_leaf(node_id, node.pane))
        return node_id
    nodes.append(None)  # its place, filled once its children have their ids
    children = [_number(child, nodes) for child in node.children]
    nodes[node_id - 1] = LayoutNode.model_construct(
        _ALL_FIELDS[LayoutNode],
        id=node_id,
        kind="split",
        direction=node.direction,
        children=children,
        ratios=list(node.ratios),
        pane=None,
    )
    return node_id


def _leaf(node_id: int, pane_id: int) -> LayoutNode:
    return LayoutNode.model_construct(
        _ALL_FIELDS[LayoutNode],
        id=node_id,
        kind="pane",
        direction=None,
        children=[],
        ratios=[],
        pane=pane_id,
    )


class SnapshotCache:
    """The models of the last capture, each made again only when one of the values it
    is made of differs (mux.system.remade).

    Why: a capture made some ten short-lived objects a pane, among the lasting objects
    of panes being spawned meanwhile, and the heap stayed fragmented after them (2000
    panes spawned with autosave on: 11.2 KiB a pane against 6.3 with none,
    bench/scale.py); unchanged panes now cost a comparison. The models are shared
    with the sessions captured: nothing may change a captured session.
    """

    def __init__(self) -> None:
        self._panes: Remade[Pane, PaneSnapshot] = Remade(weak_keys=True)
        self._windows: Remade[int, WindowSnapshot] = Remade()

    def pane(self, pane: Pane, replay_allowlist: Sequence[str] | None) -> PaneSnapshot:
        replayed = _replay_of(pane, replay_allowlist)
        made_of = (
            pane.launch,
            replayed,
            pane.cwd,
            pane.cwd_source,
            pane.cwd_captured_at,
            pane.title,
            pane.title_explicit,
            pane.rows,
            pane.cols,
            pane.pid,
            pane.start_ticks(),
        )
        return self._panes.get(pane, made_of, lambda: _pane_snapshot(pane, replayed))

    def window(self, window: Window, saved: frozenset[int]) -> WindowSnapshot:
        made_of = (
            window.layout,
            window.focused_pane,
            window.title,
            tuple(window.geometry.items()),
            saved,
        )
        return self._windows.get(window.id, made_of, lambda: window_snapshot(window, saved))

    def keep_windows(self, windows: Iterable[int]) -> None:
        """Forget the windows that are gone (panes are forgotten with the panes)."""
        self._windows.keep_only(windows)


# Panes captured between two steps: the loop carries every pane's output meanwhile,
# and 500 panes in one go held it 15-35 ms (a keystroke's echo waited as long).
CAPTURE_STEP_PANES = 50

# A capture in steps: it yields between steps (the caller may let the loop run
# there) and returns the session. The panes and windows are those of its start.
CaptureSteps = Steps[Session]

_Item = TypeVar("_Item")
_Built = TypeVar("_Built")


def _built_in_steps(
    items: Sequence[_Item], build: Callable[[_Item], _Built], step: int
) -> Generator[None, None, list[_Built]]:
    built: list[_Built] = []
    for start in range(0, len(items), step):
        if start:
            yield
        built.extend(build(item) for item in items[start : start + step])
    return built


class Captured(Protocol):
    """What a snapshot is taken of (a pane table): its panes, and its windows."""

    windows: Windows

    def __iter__(self) -> Iterator[Pane]: ...


def capture_session(
    panes: Captured,
    generation: int,
    kept: Iterable[tuple[PaneSnapshot, int]] = (),
    replay_allowlist: Sequence[str] | None = (),
) -> Session:
    """The session in one go (see `capture_steps`)."""
    return all_at_once(capture_steps(panes, generation, kept, replay_allowlist))


def capture_steps(
    panes: Captured,
    generation: int,
    kept: Iterable[tuple[PaneSnapshot, int]] = (),
    replay_allowlist: Sequence[str] | None = (),
    *,
    step: int = CAPTURE_STEP_PANES,
    cache: SnapshotCache | None = None,
) -> CaptureSteps:
    """`kept`: panes that could not be restored, (snapshot, window id), saved as they
    were so that they can be repaired: in the place their place holder has (its id
    is theirs), or, with none (handed over by an older muxd), each in a window of
    its own. Which panes and
    windows are saved is settled at the start, so the layout and the panes agree
    whatever happens between steps; each pane is read as it is at its step.
    `cache`: models of earlier captures, reused where nothing changed (None: all new)."""
    models = cache if cache is not None else SnapshotCache()
    live = sorted((pane for pane in panes if pane.is_running), key=lambda p: p.id)
    kept = list(kept)
    # A kept pane whose place holder is in a window is saved in that place.
    in_place = {snapshot.id for snapshot, _ in kept if panes.windows.window_of(snapshot.id)}
    saved = frozenset(pane.id for pane in live) | in_place
    # Copies: a window changes as panes come and go between steps (its tree is
    # immutable, a copy is as it is now).
    windows = sorted(
        (replace(window) for window in panes.windows if not saved.isdisjoint(window.panes)),
        key=lambda window: window.id,
    )
    models.keep_windows(window.id for window in windows)
    saved_windows = yield from _built_in_steps(
        windows, lambda window: models.window(window, saved.intersection(window.panes)), step
    )
    yield
    saved_panes = yield from _built_in_steps(
        live, lambda pane: models.pane(pane, replay_allowlist), step
    )
    for snapshot, window in kept:
        saved_panes.append(snapshot)
        if snapshot.id in in_place:
            continue
        node = LayoutNode.model_construct(id=1, kind="pane", pane=snapshot.id)
        saved_windows.append(
            WindowSnapshot.model_construct(
                id=window, nodes=[node], root=1, focused_pane=snapshot.id
            )
        )
    yield
    session = Session.model_construct(
        version=1,
        generation=generation,
        saved_at=time.time(),
        windows=saved_windows,
        panes=saved_panes,
    )
    check_session(session)  # what validating would have checked of the whole
    return session


def already_captured(session: Session) -> CaptureSteps:
    """The steps of a session captured already: none."""
    yield from ()
    return session
