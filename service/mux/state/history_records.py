"""What the history says about a snapshot, without I/O: what it would restore (which
decides whether it is archived), its one-line summary, and its `ListSnapshots` record."""

import os
from dataclasses import dataclass
from typing import Any

from dbus_fast import Variant

from mux.protocol.spawn_options import LaunchKind
from mux.protocol.visible import visible
from mux.state.schema import PaneSnapshot, Session, WindowSnapshot

LABEL_CHARACTERS = 40  # of one pane in a summary
SUMMARY_CHARACTERS = 120


def restorable_view(session: Session) -> tuple[Any, ...]:
    """Everything of `session` that a restore would bring back, and nothing else: equal
    views restore the same session. Left out: output, times (the snapshot's, a cwd's
    capture), the generation, pids, where a cwd was learnt, the focus (a click is not
    worth an entry), a program's resolution error (it follows the program), and the
    layout nodes' ids (two tables of the same tree are the same layout)."""
    panes = tuple(sorted((_pane_view(pane) for pane in session.panes), key=lambda v: v[0]))
    windows = tuple(sorted(_window_view(window) for window in session.windows))
    return panes, windows


def _pane_view(pane: PaneSnapshot) -> tuple[Any, ...]:
    checkpoint = pane.checkpoint
    return (
        pane.id,
        pane.kind.value,
        tuple(pane.argv),
        pane.program,
        pane.cwd.path,
        pane.title,
        pane.title_explicit,
        tuple(sorted(pane.env_overrides.items())),
        (pane.rows, pane.cols),
        pane.invocation,
        None if checkpoint is None else (checkpoint.invocation, checkpoint.generation),
        pane.replay,
    )


def _window_view(window: WindowSnapshot) -> tuple[Any, ...]:
    geometry = tuple(sorted((window.geometry or {}).items(), key=lambda item: item[0]))
    return (window.id, window.title, geometry, layout_tree(window))


def layout_tree(window: WindowSnapshot) -> tuple[Any, ...]:
    """The window's layout in tree order, one item per node: a split as its direction,
    ratios and number of children, a pane as its id. That sequence is the tree (each
    split says how many of the items after it are its children) without the node ids.
    Walked with a stack of its own (a layout may be deep); the schema has already
    refused cycles, so the walk ends."""
    nodes = {node.id: node for node in window.nodes}
    items: list[Any] = []
    to_visit = [window.root]
    while to_visit:
        node = nodes.get(to_visit.pop())
        if node is None:  # (refused by the schema: a model built without its checks)
            items.append(None)
        elif node.kind == "pane":
            items.append(("pane", node.pane))
        else:
            items.append(("split", node.direction, tuple(node.ratios), len(node.children)))
            to_visit.extend(reversed(node.children))
    return tuple(items)


def summary(session: Session, home: str | None) -> str:
    """One line for a person: "3 windows: vim notes.txt, make, bash ~/src". Every piece
    taken from the snapshot goes through `visible` (a snapshot is a file anyone could
    have written)."""
    windows = len(session.windows)
    if not session.panes:
        return "no panes"
    head = f"{windows} window{'' if windows == 1 else 's'}: "
    labels = [pane_label(pane, home) for pane in session.panes]
    text = head + labels[0]
    for shown, label in enumerate(labels[1:], start=1):
        after = len(labels) - shown - 1
        tail = f", +{after} more" if after else ""
        if len(text) + 2 + len(label) + len(tail) > SUMMARY_CHARACTERS:
            return f"{text}, +{len(labels) - shown} more"
        text += ", " + label
    return text


def pane_label(pane: PaneSnapshot, home: str | None) -> str:
    """What ran in a pane, as a person names it: the command typed again at a shell's
    prompt, else a shell and its directory, else the program and its arguments."""
    program = os.path.basename(pane.argv[0]) or pane.argv[0]
    if pane.kind is LaunchKind.SHELL:
        label = pane.replay or f"{program} {_shorter_path(pane.cwd.path, home)}"
    else:
        label = " ".join([program, *pane.argv[1:]])
    label = visible(label)
    if len(label) > LABEL_CHARACTERS:
        label = label[: LABEL_CHARACTERS - 1] + "…"
    return label


def _shorter_path(path: str, home: str | None) -> str:
    if home and home != "/" and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")) :]
    return path


@dataclass(frozen=True)
class HistoryEntry:
    """One snapshot in the history. `damaged`: why its file cannot be used ("" when it
    can); a damaged entry has no panes, no windows and the time of its directory."""

    generation: int
    time: float  # the snapshot's saved_at (Unix time)
    panes: int
    windows: int
    hosts: tuple[str, ...]  # the hosts its panes run on (the schema has none yet: ())
    bytes: int  # its files' sizes, each file once
    summary: str
    damaged: str = ""


def snapshot_record(entry: HistoryEntry) -> dict[str, Variant]:
    """The entry as `ListSnapshots` answers it (SPEC §13)."""
    return {
        "generation": Variant("t", entry.generation),
        "time": Variant("x", int(entry.time)),
        "panes": Variant("u", entry.panes),
        "windows": Variant("u", entry.windows),
        "hosts": Variant("as", list(entry.hosts)),
        "bytes": Variant("t", entry.bytes),
        "summary": Variant("s", entry.summary),
    }
