"""The session as a snapshot: what the pane table holds, in the schema's terms.

Exited panes are not part of it (an exited pane is never resurrected, docs/dbus-api.md).
The layout of a window is its panes side by side, in the order they were
created, with equal shares; the focused pane is the most recently created one
(mux has no focus of its own yet: that is the rule, not a guess).

The models are built with `model_construct`, unvalidated: every value comes from
mux's own pane table, already of the schema's types, and validating 500 panes cost
a quarter of a snapshot; the session's own rules (check_session) are still checked,
and a file is validated whole when it is read.
"""

import time
from collections.abc import Iterable, Sequence

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


def pane_snapshot(pane: Pane, replay_allowlist: Sequence[str] = ()) -> PaneSnapshot:
    """A shell pane's checkpoint is only kept with the command to replay: without it,
    whoever started next at the prompt would be handed someone else's state."""
    generation = pane.checkpoint_generation
    replay = None
    if pane.launch.kind is LaunchKind.SHELL:
        replayed = pane.snapshot_replay(replay_allowlist)
        replay, generation = replayed if replayed is not None else (None, None)
    return PaneSnapshot.model_construct(
        id=pane.id,
        **pane.launch.snapshot_fields(),
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
        nodes = [LayoutNode.model_construct(id=1, kind="pane", pane=ordered[0].id)]
    else:
        leaves = [
            LayoutNode.model_construct(id=2 + i, kind="pane", pane=p.id)
            for i, p in enumerate(ordered)
        ]
        split = LayoutNode.model_construct(
            id=1,
            kind="split",
            direction="vertical",
            children=[leaf.id for leaf in leaves],
            ratios=[1 / len(leaves)] * len(leaves),
        )
        nodes = [split, *leaves]
    return WindowSnapshot.model_construct(
        id=window, nodes=nodes, root=1, focused_pane=ordered[-1].id
    )


def capture_session(
    panes: Iterable[Pane],
    generation: int,
    kept: Iterable[tuple[PaneSnapshot, int]] = (),
    replay_allowlist: Sequence[str] = (),
) -> Session:
    """`kept`: panes that could not be restored, (snapshot, window id), saved as they
    were so that they can be repaired, each in a window of its own."""
    live = [pane for pane in panes if pane.is_running]
    windows: dict[int, list[Pane]] = {}
    for pane in live:
        windows.setdefault(pane.window, []).append(pane)
    saved_windows = [window_snapshot(w, windows[w]) for w in sorted(windows)]
    saved_panes = [
        pane_snapshot(pane, replay_allowlist) for pane in sorted(live, key=lambda p: p.id)
    ]
    for snapshot, window in kept:
        node = LayoutNode.model_construct(id=1, kind="pane", pane=snapshot.id)
        saved_windows.append(
            WindowSnapshot.model_construct(
                id=window, nodes=[node], root=1, focused_pane=snapshot.id
            )
        )
        saved_panes.append(snapshot)
    session = Session.model_construct(
        version=1,
        generation=generation,
        saved_at=time.time(),
        windows=saved_windows,
        panes=saved_panes,
    )
    check_session(session)  # what validating would have checked of the whole
    return session
