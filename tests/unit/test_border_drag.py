"""A border dragged with the mouse (mux.protocol.border_drag): the border under a cell,
and the layout with it moved — only the two panes beside it change, each keeps a cell,
and the border lands exactly on the line it was dragged to."""

from hypothesis import given
from hypothesis import strategies as st

from mux.protocol.border_drag import border_under, dragged
from mux.protocol.layout import Leaf, Node, Split, split_node
from mux.protocol.regions import place

# 1 on the left; 2 above 3 on the right, at 24 x 81: the vertical border at column 40,
# the horizontal one at row 12 from column 41 on.
NESTED = Split(
    "horizontal", (0.5, 0.5), (Leaf(1), Split("vertical", (0.5, 0.5), (Leaf(2), Leaf(3))))
)


def test_the_border_under_a_cell() -> None:
    regions = place(NESTED, 24, 81)
    vertical = border_under(regions, (5, 40))
    assert vertical is not None and vertical.vertical and vertical.split == ()
    across = border_under(regions, (12, 60))
    assert across is not None and not across.vertical and across.split == (1,)
    assert border_under(regions, (12, 40)) == vertical  # (where they meet: the vertical one)
    assert border_under(regions, (5, 39)) is None  # in pane 1


def test_a_vertical_border_dragged_left_and_right() -> None:
    regions = place(NESTED, 24, 81)
    border = border_under(regions, (0, 40))
    assert border is not None
    moved = dragged(NESTED, border, 30)
    assert moved is not None
    placed = place(moved, 24, 81)
    assert placed.panes[1].cols == 30 and placed.panes[2].left == 31
    assert placed.panes[2].rows == 12  # the split inside is as it was
    assert dragged(NESTED, border, 40) is None  # (where it is)
    far = dragged(NESTED, border, 200)
    assert far is not None and place(far, 24, 81).panes[2].cols == 1  # a cell left


def test_a_horizontal_border_inside_a_split() -> None:
    regions = place(NESTED, 24, 81)
    border = border_under(regions, (12, 50))
    assert border is not None
    moved = dragged(NESTED, border, 4)
    assert moved is not None
    placed = place(moved, 24, 81)
    assert placed.panes[2].rows == 4 and placed.panes[3].top == 5
    assert placed.panes[1].cols == 40


def test_a_layout_changed_since_is_left_alone() -> None:
    border = border_under(place(NESTED, 24, 81), (12, 50))
    assert border is not None
    assert dragged(Leaf(1), border, 3) is None


@given(st.lists(st.integers(1, 50), min_size=2, max_size=6), st.data())
def test_the_border_lands_where_it_is_dragged(weights: list[int], data: st.DataObject) -> None:
    ratios = tuple(w / sum(weights) for w in weights)
    tree: Node = split_node(
        "horizontal", ratios, tuple(Leaf(p) for p in range(1, len(weights) + 1))
    )
    cols = data.draw(st.integers(3 * len(weights), 200))
    regions = place(tree, 10, cols)
    border = data.draw(st.sampled_from(regions.borders))
    to = data.draw(st.integers(0, cols - 1))
    moved = dragged(tree, border, to)
    if moved is None:
        return
    assert isinstance(moved, Split)
    split_node(moved.direction, moved.ratios, moved.children)  # a valid layout
    after = place(moved, 10, cols)
    lines = [b.left for b in after.borders]
    before = [b.left for b in regions.borders]
    i = border.after
    low = before[i - 1] + 2 if i > 0 else 1  # each pane beside it keeps a cell
    high = before[i + 1] - 2 if i + 1 < len(before) else cols - 2
    assert lines[i] == min(max(to, low), high)
    assert lines[:i] + lines[i + 1 :] == before[:i] + before[i + 1 :]  # no other moved
