"""The session snapshot (`<state>/session.json`): versioned models and their rules.

Version 1. Each window's layout is a table of nodes (splits with ratios, and
panes) under a root; the rules below refuse, with the problem named, anything
that does not form one tree per window over the snapshot's panes: missing
nodes, cycles, orphaned nodes, duplicate ids, a focus outside the window. A
problem is never replaced by a guess (no "first pane" for a bad focus).
Older versions are migrated by executable steps in `MIGRATIONS`.
"""

import math
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mux.protocol.layout import RATIO_TOLERANCE
from mux.protocol.names import CwdSource
from mux.protocol.spawn_options import MAX_COLS, MAX_ROWS, LaunchKind
from mux.protocol.window_options import fits_geometry

CURRENT_VERSION = 1
# Numbers a snapshot may hold: what D-Bus carries them as (ids and generations `t`,
# below int64 so that a next one still fits), and times that time.localtime() can
# show (0 to the end of year 9999). The file's reader refuses wider numbers and
# infinities before the models see them (mux.system.json_file).
MAX_ID = 2**63 - 1
MAX_GENERATION = 2**63 - 1
MAX_TIME = 253_402_300_799.0
_Time = Annotated[float, Field(ge=0, le=MAX_TIME, allow_inf_nan=False)]


class SnapshotError(ValueError):
    """The snapshot breaks a rule; the message names the problem."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CwdRecord(_Model):
    path: str
    source: CwdSource
    captured_at: _Time  # Unix time


class CheckpointRef(_Model):
    """The application's checkpoint (application-resurrection/1) as of this snapshot."""

    invocation: str
    generation: int = Field(ge=1, le=MAX_GENERATION)


class PaneSnapshot(_Model):
    id: int = Field(ge=1, le=MAX_ID)
    kind: LaunchKind
    argv: list[str] = Field(min_length=1)
    program: str | None  # absolute path resolved at spawn; None when it could not be
    program_error: str | None = None  # why not: shown at restore, never guessed around
    cwd: CwdRecord
    env_overrides: dict[str, str] = {}
    title: str
    title_explicit: bool = False
    rows: int = Field(ge=1, le=MAX_ROWS)
    cols: int = Field(ge=1, le=MAX_COLS)
    invocation: str  # opaque identity of this launch (application-resurrection)
    checkpoint: CheckpointRef | None = None
    # A shell pane: the command line its foreground application was started with, to
    # be typed again at the restored shell's first prompt (checkpointed or allowlisted).
    replay: str | None = None
    # The program as it ran (pid and start time, Linux): if it still runs at restore
    # (mux was killed and the program ignored the hangup), it is not started twice.
    pid: int | None = None
    start_ticks: int | None = None

    @model_validator(mode="after")
    def _startable(self) -> "PaneSnapshot":
        """What Spawn refuses cannot be restored either: refused here, with the reason."""
        for arg in self.argv:
            if "\x00" in arg:
                raise SnapshotError(f"pane {self.id}: an argument contains NUL")
        for key, value in self.env_overrides.items():
            if not key or "=" in key or "\x00" in key or "\x00" in value:
                raise SnapshotError(f"pane {self.id}: environment variable {key!r} is not valid")
        return self


class LayoutNode(_Model):
    id: int
    kind: Literal["split", "pane"]
    direction: Literal["horizontal", "vertical"] | None = None
    children: list[int] = []
    ratios: list[Annotated[float, Field(allow_inf_nan=False)]] = []
    pane: int | None = None

    @model_validator(mode="after")
    def _shape(self) -> "LayoutNode":
        if self.kind == "pane":
            if self.pane is None or self.children:
                raise SnapshotError(
                    f"node {self.id} is a pane node: it names one pane, no children"
                )
            return self
        if self.direction is None or len(self.children) < 2:
            raise SnapshotError(f"node {self.id} is a split: it needs a direction and 2+ children")
        if len(self.ratios) != len(self.children) or any(r <= 0 for r in self.ratios):
            raise SnapshotError(f"node {self.id}: one positive ratio per child is needed")
        # The tolerance a client's layout was accepted with (SetWindow): what muxd
        # took, it must read again.
        if not math.isclose(sum(self.ratios), 1.0, abs_tol=RATIO_TOLERANCE):
            raise SnapshotError(f"node {self.id}: its ratios add up to {sum(self.ratios)}, not 1")
        return self


class WindowSnapshot(_Model):
    id: int = Field(ge=1, le=MAX_ID)
    title: str = ""
    # As a desktop client set it (docs/windows.md#window-objects): x, y, width, height,
    # monitor; None when none.
    geometry: dict[str, int | str] | None = None

    @model_validator(mode="after")
    def _geometry(self) -> "WindowSnapshot":
        """What SetWindow takes, and nothing else: a window published with anything
        else could not be described on the bus."""
        for key, value in (self.geometry or {}).items():
            if not fits_geometry(key, value):
                raise SnapshotError(f"window {self.id}: geometry {key}={value!r} is not valid")
        return self

    nodes: list[LayoutNode] = Field(min_length=1)
    root: int
    focused_pane: int


class Session(_Model):
    version: Literal[1]
    generation: int = Field(ge=0, le=MAX_GENERATION)
    saved_at: _Time
    windows: list[WindowSnapshot]
    panes: list[PaneSnapshot]

    @model_validator(mode="after")
    def _one_tree_per_window(self) -> "Session":
        check_session(self)
        return self


def _duplicate(ids: list[int]) -> int | None:
    seen: set[int] = set()
    for value in ids:
        if value in seen:
            return value
        seen.add(value)
    return None


def _window_panes(window: WindowSnapshot, known_panes: set[int]) -> list[int]:
    """The panes of one window's layout, in tree order; every rule checked on the way."""
    w = f"window {window.id}"
    nodes = {node.id: node for node in window.nodes}
    if (twice := _duplicate([node.id for node in window.nodes])) is not None:
        raise SnapshotError(f"{w}: node {twice} appears twice")
    if window.root not in nodes:
        raise SnapshotError(f"{w}: its root node {window.root} does not exist")
    panes: list[int] = []
    reached: set[int] = set()
    path: list[int] = []  # the splits from the root down to where the walk is
    # A walk with a stack of its own, not a nested recursive function: that would be
    # a reference cycle left for the collector on every snapshot of every window,
    # and a deep layout would end in RecursionError.
    to_visit: list[int | None] = [window.root]  # None: the last split entered is done
    while to_visit:
        node_id = to_visit.pop()
        if node_id is None:
            path.pop()
            continue
        if node_id in path:
            raise SnapshotError(f"{w}: the layout has a cycle through node {node_id}")
        if node_id in reached:
            raise SnapshotError(f"{w}: node {node_id} has two parents")
        node = nodes.get(node_id)
        if node is None:
            raise SnapshotError(f"{w}: node {path[-1]} names node {node_id}, which does not exist")
        reached.add(node_id)
        if node.kind == "pane":
            assert node.pane is not None
            if node.pane not in known_panes:
                raise SnapshotError(f"{w}: node {node_id} shows pane {node.pane}, which is missing")
            panes.append(node.pane)
            continue
        path.append(node_id)
        to_visit.append(None)
        to_visit.extend(reversed(node.children))

    if orphans := sorted(set(nodes) - reached):
        raise SnapshotError(f"{w}: node {orphans[0]} is orphaned (not reachable from the root)")
    if window.focused_pane not in panes:
        raise SnapshotError(
            f"{w}: the focused pane {window.focused_pane} is not in its layout (unreachable focus)"
        )
    return panes


def check_session(session: Session) -> None:
    pane_ids = [pane.id for pane in session.panes]
    if (twice := _duplicate(pane_ids)) is not None:
        raise SnapshotError(f"pane id {twice} appears twice")
    if (twice := _duplicate([window.id for window in session.windows])) is not None:
        raise SnapshotError(f"window id {twice} appears twice")
    placed: list[int] = []
    known = set(pane_ids)
    for window in session.windows:
        placed += _window_panes(window, known)
    if (twice := _duplicate(placed)) is not None:
        raise SnapshotError(f"pane {twice} is placed twice in the layouts")
    if unplaced := sorted(known - set(placed)):
        raise SnapshotError(f"pane {unplaced[0]} is in no window's layout")


# -- migrations: version N -> N+1, each a plain function of the decoded JSON --------


def _v0_to_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 0 kept a bare cwd string without provenance: it becomes a launch cwd
    captured at the Unix epoch (what is known: where it was started, not when)."""
    old_panes = data.get("panes", [])
    if not isinstance(old_panes, list):
        return {**data, "version": 1}  # (refused by the models, with the reason)
    panes = []
    for old in old_panes:
        pane = dict(old) if isinstance(old, dict) else old
        if isinstance(pane, dict) and isinstance(pane.get("cwd"), str):
            pane["cwd"] = {"path": pane["cwd"], "source": "launch", "captured_at": 0.0}
        panes.append(pane)
    return {**data, "panes": panes, "version": 1}


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {0: _v0_to_v1}


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SnapshotError("the snapshot has no version number")
    if version > CURRENT_VERSION:
        raise SnapshotError(
            f"the snapshot is version {version}, newer than this mux reads ({CURRENT_VERSION})"
        )
    while version < CURRENT_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise SnapshotError(f"no migration from snapshot version {version}")
        data = step(data)
        version = data["version"]
    return data
