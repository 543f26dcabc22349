"""The session as a snapshot: what the pane table holds, in the schema's terms.

Exited panes are not part of it (an exited pane is never resurrected, docs/dbus-api.md).
The layout of a window is its panes side by side, in the order they were
created, with equal shares; the focused pane is the most recently created one
(mux has no focus of its own yet: that is the rule, not a guess).

The models are built with `model_construct`, unvalidated: every value comes from
mux's own pane table, already of the schema's types, and validating 500 panes cost
a quarter of a snapshot; the session's own rules (check_session) are still checked,
and a file is validated whole when it is read. A `SnapshotCache` keeps each pane's
and window's model from one capture to the next, and makes one again only when
something it is made of has changed.
"""

import time
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import TypeVar

from mux.panes.pane import Pane
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


def pane_snapshot(pane: Pane, replay_allowlist: Sequence[str] = ()) -> PaneSnapshot:
    return _pane_snapshot(pane, _replay_of(pane, replay_allowlist))


def _replay_of(pane: Pane, replay_allowlist: Sequence[str]) -> tuple[str | None, int | None]:
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
        id=pane.id,
        **pane.launch.snapshot_fields(),
        program_error=None,  # (a running pane's program was found)
        cwd=CwdRecord.model_construct(
            path=pane.cwd, source=pane.cwd_source, captured_at=pane.cwd_captured_at
        ),
        title=pane.title,
        title_explicit=pane.title_explicit,
        rows=pane.rows,
        cols=pane.cols,
        checkpoint=(
            CheckpointRef.model_construct(invocation=pane.launch.invocation, generation=generation)
            if generation is not None
            else None
        ),
        replay=replay,
        pid=pane.pid,
        start_ticks=pane.start_ticks(),
    )


def window_snapshot(window: int, panes: list[Pane]) -> WindowSnapshot:
    ordered = sorted(panes, key=lambda pane: pane.id)
    if len(ordered) == 1:
        nodes = [_leaf(1, ordered[0].id)]
    else:
        leaves = [_leaf(2 + i, p.id) for i, p in enumerate(ordered)]
        split = LayoutNode.model_construct(
            id=1,
            kind="split",
            direction="vertical",
            children=[leaf.id for leaf in leaves],
            ratios=[1 / len(leaves)] * len(leaves),
            pane=None,
        )
        nodes = [split, *leaves]
    return WindowSnapshot.model_construct(
        id=window, title="", geometry=None, nodes=nodes, root=1, focused_pane=ordered[-1].id
    )


def _leaf(node_id: int, pane_id: int) -> LayoutNode:
    return LayoutNode.model_construct(
        id=node_id, kind="pane", direction=None, children=[], ratios=[], pane=pane_id
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

    def pane(self, pane: Pane, replay_allowlist: Sequence[str]) -> PaneSnapshot:
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

    def window(self, window: int, panes: list[Pane]) -> WindowSnapshot:
        made_of = tuple(sorted(pane.id for pane in panes))
        return self._windows.get(window, made_of, lambda: window_snapshot(window, panes))

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


def capture_session(
    panes: Iterable[Pane],
    generation: int,
    kept: Iterable[tuple[PaneSnapshot, int]] = (),
    replay_allowlist: Sequence[str] = (),
) -> Session:
    """The session in one go (see `capture_steps`)."""
    return all_at_once(capture_steps(panes, generation, kept, replay_allowlist))


def capture_steps(
    panes: Iterable[Pane],
    generation: int,
    kept: Iterable[tuple[PaneSnapshot, int]] = (),
    replay_allowlist: Sequence[str] = (),
    *,
    step: int = CAPTURE_STEP_PANES,
    cache: SnapshotCache | None = None,
) -> CaptureSteps:
    """`kept`: panes that could not be restored, (snapshot, window id), saved as they
    were so that they can be repaired, each in a window of its own. Which panes and
    windows are saved is settled at the start, so the layout and the panes agree
    whatever happens between steps; each pane is read as it is at its step.
    `cache`: models of earlier captures, reused where nothing changed (None: all new)."""
    models = cache if cache is not None else SnapshotCache()
    live = sorted((pane for pane in panes if pane.is_running), key=lambda p: p.id)
    windows: dict[int, list[Pane]] = {}
    for pane in live:
        windows.setdefault(pane.window, []).append(pane)
    models.keep_windows(windows)
    saved_windows = yield from _built_in_steps(
        sorted(windows), lambda window: models.window(window, windows[window]), step
    )
    yield
    saved_panes = yield from _built_in_steps(
        live, lambda pane: models.pane(pane, replay_allowlist), step
    )
    for snapshot, window in kept:
        node = LayoutNode.model_construct(id=1, kind="pane", pane=snapshot.id)
        saved_windows.append(
            WindowSnapshot.model_construct(
                id=window, nodes=[node], root=1, focused_pane=snapshot.id
            )
        )
        saved_panes.append(snapshot)
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
