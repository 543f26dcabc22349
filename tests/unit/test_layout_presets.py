"""muxctl.layout_presets: tmux's preset layouts of a window's panes, as layout trees
muxd takes (checked by mux.protocol.layout's own rules)."""

import pytest

from mux.protocol.layout import (
    Leaf,
    Node,
    Split,
    check_window_layout,
    panes_of,
    parse_layout,
    to_json,
)
from muxctl.layout_presets import PRESETS, next_preset, preset_layout


def _shape(node: Node) -> object:
    if isinstance(node, Leaf):
        return node.pane
    return (node.direction[0], [_shape(child) for child in node.children])


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("even-horizontal", ("h", [1, 2, 3, 4, 5])),
        ("even-vertical", ("v", [1, 2, 3, 4, 5])),
        ("main-horizontal", ("v", [1, ("h", [2, 3, 4, 5])])),
        ("main-vertical", ("h", [1, ("v", [2, 3, 4, 5])])),
        ("tiled", ("v", [("h", [1, 2, 3]), ("h", [4, 5])])),
    ],
)
def test_each_preset_of_five_panes(name: str, shape: object) -> None:
    layout = preset_layout(name, [1, 2, 3, 4, 5])
    assert _shape(layout) == shape
    assert list(panes_of(layout)) == [1, 2, 3, 4, 5]
    for node in [layout, *(c for c in getattr(layout, "children", ()) if isinstance(c, Split))]:
        assert isinstance(node, Split) and abs(sum(node.ratios) - 1) < 1e-9
    # As muxd reads and checks it (raises if not): the same tree back, its panes.
    assert parse_layout(to_json(layout)) == layout
    check_window_layout(layout, 9, {1, 2, 3, 4, 5}, 3, lambda pane: None)


def test_one_pane_is_itself_and_two_tile_side_by_side() -> None:
    assert all(preset_layout(name, [7]) == Leaf(7) for name in PRESETS)
    assert _shape(preset_layout("tiled", [1, 2])) == ("h", [1, 2])
    assert _shape(preset_layout("tiled", [1, 2, 3, 4])) == ("v", [("h", [1, 2]), ("h", [3, 4])])


def test_next_layout_goes_round_the_presets() -> None:
    order = [next_preset(None)]
    for _ in PRESETS:
        order.append(next_preset(order[-1]))
    assert [PRESETS[at] for at in order] == [*PRESETS, PRESETS[0]]
