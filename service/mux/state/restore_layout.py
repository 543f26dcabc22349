"""Where restored panes go: a saved window's tree of panes, the window its panes go back
into, and their places once they are back (mux.state.restore)."""

from mux.panes.table import PaneTable
from mux.protocol.layout import Leaf, Node, Split, panes_of, with_panes_renamed, without_pane
from mux.state.schema import LayoutNode, PaneSnapshot, Session, WindowSnapshot


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


def lay_out(
    table: PaneTable,
    window: WindowSnapshot,
    layout: Node,
    placed: dict[int, int],
    live: int,
    *,
    readopted: bool,
) -> None:
    """The panes in the places their window had saved for them (`placed`: saved id ->
    id now, restored or holding the place; after a crash (`readopted`) the re-adopted
    panes of window `live` keep their ids and places)."""
    present = set(table.windows.get(live).panes) if readopted else set()
    for pane in panes_of(layout):
        if pane not in placed and pane not in present:
            pruned = without_pane(layout, pane)
            assert pruned is not None  # (some pane of the window was placed)
            layout = pruned
    ids_now = {pane: placed.get(pane, pane) for pane in panes_of(layout)}
    renamed = with_panes_renamed(layout, ids_now)
    focus = placed.get(window.focused_pane, window.focused_pane)
    table.windows.take_saved(live, renamed, focus, window.title, window.geometry or {})


def window_of_readopted(table: PaneTable, layout: Node, restoring: set[int]) -> int:
    """After a crash: the window the re-adopted panes of a saved window are in (they
    kept their ids); 0 (a new window) when none of them is."""
    for pane_id in panes_of(layout):
        if pane_id not in restoring:
            window = table.windows.window_of(pane_id)
            if window is not None:
                return window
    return 0


def restore_order(session: Session, only: set[int] | None = None) -> list[PaneSnapshot]:
    """The saved panes in the order `restore_session` takes them: window by window, each
    window's in its layout's order."""
    panes = {pane.id: pane for pane in session.panes}
    return [
        panes[pane]
        for window in session.windows
        for pane in layout_order(saved_layout(window), only)
        if pane in panes
    ]


def layout_order(layout: Node, only: set[int] | None) -> list[int]:
    return [pane for pane in panes_of(layout) if only is None or pane in only]
