"""Layout trees (SPEC §11): random valid trees round-trip and pass the window's rules;
each kind of corruption is refused naming the rule it breaks; the changes a window
makes (a split, a pane gone, ids renamed) keep a tree valid."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.strategies import DrawFn

from mux.protocol import layout
from mux.protocol.layout import (
    DIRECTIONS,
    MAX_DEPTH,
    Direction,
    LayoutError,
    Leaf,
    Node,
    Split,
    check_window_layout,
    from_data,
    panes_of,
    parse_layout,
    split_pane,
    to_data,
    to_json,
    with_panes_renamed,
    without_pane,
)

WINDOW = 7
OTHER_WINDOW = 8
MAX_PANE = 2**64 - 1
Path = tuple[int, ...]
WindowOf = Callable[[int], int | None]


# -- valid trees ---------------------------------------------------------------------


def _shape(draw: DrawFn, ids: list[int], depth: int) -> Node:
    """A tree over `ids` (in order) with at most `depth` levels of splits."""
    if len(ids) == 1:
        return Leaf(ids[0])
    if depth == 1:  # the last level: every pane a leaf of one split
        groups = [[pane] for pane in ids]
    else:
        count = draw(st.integers(2, min(len(ids), 5)))
        cuts = sorted(
            draw(st.sets(st.integers(1, len(ids) - 1), min_size=count - 1, max_size=count - 1))
        )
        groups = [ids[a:b] for a, b in zip([0, *cuts], [*cuts, len(ids)], strict=True)]
    weights = draw(st.lists(st.integers(1, 100), min_size=len(groups), max_size=len(groups)))
    return Split(
        draw(st.sampled_from(DIRECTIONS)),
        tuple(weight / sum(weights) for weight in weights),
        tuple(_shape(draw, group, depth - 1) for group in groups),
    )


@st.composite
def trees(draw: DrawFn, min_leaves: int = 1, max_leaves: int = 30, max_depth: int = 6) -> Node:
    ids = draw(
        st.lists(st.integers(1, MAX_PANE), min_size=min_leaves, max_size=max_leaves, unique=True)
    )
    return _shape(draw, ids, max_depth)


def _paths(data: dict[str, Any], path: Path = ()) -> list[Path]:
    """Every node's path (child indices from the root), the root first."""
    children = enumerate(data.get("children", []))
    return [path, *(below for i, child in children for below in _paths(child, (*path, i)))]


def _at(data: dict[str, Any], path: Path) -> dict[str, Any]:
    for i in path:
        data = data["children"][i]
    return data


def _replaced(data: dict[str, Any], path: Path, new: object) -> object:
    """`data` with the node at `path` replaced by `new` (in place; the root is returned)."""
    if not path:
        return new
    _at(data, path[:-1])["children"][path[-1]] = new
    return data


def _pick(data: st.DataObject, tree: dict[str, Any], leaves: bool | None = None) -> Path:
    """A node's path: any node, a leaf (leaves=True) or a split (leaves=False)."""
    paths = [p for p in _paths(tree) if leaves is None or ("pane" in _at(tree, p)) == leaves]
    return data.draw(st.sampled_from(paths))


def _refused(rule: str, text: str) -> LayoutError:
    with pytest.raises(LayoutError) as refused:
        parse_layout(text)
    assert refused.value.rule == rule, str(refused.value)
    assert f"'{rule}'" in str(refused.value)  # the message names it too
    return refused.value


def _nowhere(_pane: int) -> int | None:
    return None


def _check(node: Node, panes: list[int], focus: int) -> None:
    check_window_layout(node, WINDOW, panes, focus, _nowhere)


def _window_refusal(
    rule: str, node: Node, panes: list[int], focus: int, window_of: WindowOf = _nowhere
) -> str:
    with pytest.raises(LayoutError) as refused:
        check_window_layout(node, WINDOW, panes, focus, window_of)
    assert refused.value.rule == rule, str(refused.value)
    return str(refused.value)


# -- valid trees pass ---------------------------------------------------------------


@given(trees())
def test_a_tree_survives_json_and_data_unchanged(tree: Node) -> None:
    assert parse_layout(to_json(tree)) == tree
    assert from_data(to_data(tree)) == tree
    assert parse_layout(f'{{"pane": {MAX_PANE}}}') == Leaf(MAX_PANE)  # the largest D-Bus "t"


@given(trees(), st.data())
def test_a_tree_passes_the_window_rules_with_its_own_panes_and_any_focus(
    tree: Node, data: st.DataObject
) -> None:
    panes = list(panes_of(tree))
    _check(tree, panes, data.draw(st.sampled_from(panes)))
    _check(tree, list(reversed(panes)), panes[0])  # order of the window's panes


# -- corruptions are refused with their rule ------------------------------------------


@given(trees(min_leaves=2), st.data())
def test_a_pane_named_twice_breaks_each_pane_once(tree: Node, data: st.DataObject) -> None:
    panes = list(panes_of(tree))
    corrupt = to_data(tree)
    leaves = [p for p in _paths(corrupt) if "pane" in _at(corrupt, p)]
    a, b = data.draw(st.permutations(leaves))[:2]
    _at(corrupt, b)["pane"] = _at(corrupt, a)["pane"]
    message = _window_refusal(layout.PANE_TWICE, from_data(corrupt), panes, panes[0])
    assert f"pane {_at(corrupt, a)['pane']} appears twice" in message


@given(trees(min_leaves=2), st.data(), st.integers(1, MAX_PANE))
def test_a_window_pane_absent_from_the_tree_breaks_every_pane(
    tree: Node, data: st.DataObject, extra: int
) -> None:
    panes = list(panes_of(tree))
    assume(extra not in panes)
    message = _window_refusal(layout.PANE_MISSING, tree, [*panes, extra], panes[0])
    assert f"pane {extra} of window {WINDOW}" in message
    dropped = data.draw(st.sampled_from(panes))  # a leaf dropped (its space to a sibling)
    pruned = without_pane(tree, dropped)
    assert pruned is not None
    _window_refusal(layout.PANE_MISSING, pruned, panes, panes[1 if dropped == panes[0] else 0])


@given(trees(), st.data(), st.integers(1, MAX_PANE))
def test_a_pane_of_another_window_or_none_breaks_only_the_windows_panes(
    tree: Node, data: st.DataObject, stranger: int
) -> None:
    panes = list(panes_of(tree))
    assume(stranger not in panes)
    corrupt = to_data(tree)
    _at(corrupt, _pick(data, corrupt, leaves=True))["pane"] = stranger
    node = from_data(corrupt)
    elsewhere = _window_refusal(layout.FOREIGN_PANE, node, panes, panes[0], lambda _: OTHER_WINDOW)
    assert f"pane {stranger} is in window {OTHER_WINDOW}" in elsewhere
    unknown = _window_refusal(layout.FOREIGN_PANE, node, panes, panes[0], _nowhere)
    assert f"pane {stranger} does not exist" in unknown


@given(trees(), st.integers(1, MAX_PANE))
def test_a_focus_outside_the_tree_breaks_focus_in_the_window(tree: Node, focus: int) -> None:
    assume(focus not in (panes := list(panes_of(tree))))
    _window_refusal(layout.FOCUS, tree, panes, focus)
    _window_refusal(layout.FOCUS, tree, panes, 0)


@given(trees(), st.data())
def test_a_split_of_one_child_breaks_two_children(tree: Node, data: st.DataObject) -> None:
    corrupt = to_data(tree)
    path = _pick(data, corrupt)
    lone = {"split": "vertical", "ratios": [1.0], "children": [_at(corrupt, path)]}
    _refused(layout.TWO_CHILDREN, json.dumps(_replaced(corrupt, path, lone)))
    _refused(layout.TWO_CHILDREN, '{"split": "horizontal", "ratios": [], "children": []}')


RATIO_CORRUPTIONS: dict[str, Callable[[list[float], int], list[Any]]] = {
    "sum above 1": lambda r, i: [*r[:i], r[i] + 0.01, *r[i + 1 :]],
    "sum below 1": lambda r, i: [*r[:i], r[i] * 0.5, *r[i + 1 :]] if r[i] > 0.004 else [],
    "zero": lambda r, i: [*r[:i], 0, *r[i + 1 :]],
    "negative": lambda r, i: [*r[:i], -r[i], *r[i + 1 :]],
    "not a number": lambda r, i: [*r[:i], math.nan, *r[i + 1 :]],
    "infinite": lambda r, i: [*r[:i], math.inf, *r[i + 1 :]],
    "one too many": lambda r, i: [*r, r[i]],
    "one too few": lambda r, i: r[:i] + r[i + 1 :],
}


@pytest.mark.parametrize("kind", RATIO_CORRUPTIONS)
@settings(max_examples=50)
@given(tree=trees(min_leaves=2), data=st.data())
def test_bad_ratios_break_the_ratios_rule(kind: str, tree: Node, data: st.DataObject) -> None:
    corrupt = to_data(tree)
    split = _at(corrupt, _pick(data, corrupt, leaves=False))
    ratios = RATIO_CORRUPTIONS[kind](
        split["ratios"], data.draw(st.sampled_from(range(len(split["ratios"]))))
    )
    assume(ratios)  # (not a ratio too small to halve past the tolerance)
    split["ratios"] = ratios
    _refused(layout.RATIOS, json.dumps(corrupt))


def _split_of(**keys: object) -> dict[str, object]:
    leaves = [{"pane": 1}, {"pane": 2}]
    return {"split": "vertical", "ratios": [0.5, 0.5], "children": leaves} | keys


MALFORMED_NODES: dict[str, object] = {
    "a list": [{"pane": 1}],
    "a number": 3,
    "null": None,
    "no keys": {},
    "a leaf with another key": {"pane": 1, "size": 3},
    "a split with another key": _split_of(size=3),
    "a split without ratios": {"split": "vertical", "children": [{"pane": 1}, {"pane": 2}]},
    "an unknown direction": _split_of(split="diagonal"),
    "a capitalised direction": _split_of(split="Vertical"),
    "a direction of another type": _split_of(split=["vertical"]),
    "children not a list": _split_of(children={"pane": 1}),
    "ratios not a list": _split_of(ratios=1),
    "a string ratio": _split_of(ratios=["0.5", 0.5]),
    "a bool ratio": _split_of(ratios=[True, 0.5]),
    "pane true": {"pane": True},
    "pane false": {"pane": False},
    "pane 0": {"pane": 0},
    "a negative pane": {"pane": -4},
    "a pane of 2**64": {"pane": 2**64},
    "a fractional pane": {"pane": 1.5},
    "a string pane": {"pane": "3"},
    "a null pane": {"pane": None},
}


@pytest.mark.parametrize("kind", MALFORMED_NODES)
@settings(max_examples=30)
@given(tree=trees(), data=st.data())
def test_a_malformed_node_anywhere_breaks_the_shape(
    kind: str, tree: Node, data: st.DataObject
) -> None:
    corrupt = to_data(tree)
    path = _pick(data, corrupt)
    _refused(layout.MALFORMED, json.dumps(_replaced(corrupt, path, MALFORMED_NODES[kind])))


@given(trees(), st.data())
def test_text_that_is_not_json_breaks_the_shape(tree: Node, data: st.DataObject) -> None:
    text = to_json(tree)
    cut = data.draw(st.integers(0, len(text) - 1))
    assert "not JSON" in str(_refused(layout.MALFORMED, text[:cut]))
    _refused(layout.MALFORMED, text + "}")


def _chain(depth: int) -> str:
    """`depth` splits, each holding the next and a leaf, as JSON text."""
    split = '{"split":"horizontal","ratios":[0.5,0.5],"children":[{"pane":1},'
    return split * depth + '{"pane":2}' + "]}" * depth


def test_the_deepest_allowed_tree_is_read_and_one_more_level_is_refused() -> None:
    deepest = parse_layout(_chain(MAX_DEPTH))
    assert parse_layout(to_json(deepest)) == deepest
    assert "deeper than" in str(_refused(layout.MALFORMED, _chain(MAX_DEPTH + 1)))


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_a_very_deep_tree_is_refused_as_malformed_not_a_recursion_error(depth: int) -> None:
    _refused(layout.MALFORMED, _chain(depth))
    data: dict[str, Any] = {"pane": 2}
    for _ in range(depth):  # built without recursion, past the JSON reader
        data = {"split": "vertical", "ratios": [0.5, 0.5], "children": [{"pane": 1}, data]}
    with pytest.raises(LayoutError) as refused:
        from_data(data)
    assert refused.value.rule == layout.MALFORMED


@pytest.mark.parametrize("ratios", [[10**400, 1], [1e308, 1e308], [1.5, -0.5]])
def test_a_ratio_above_1_even_too_large_for_a_float_breaks_the_ratios_rule(
    ratios: list[float],
) -> None:
    _refused(layout.RATIOS, json.dumps(_split_of(ratios=ratios)))  # not an OverflowError


# -- the changes a window makes -------------------------------------------------------


@given(
    trees(),
    st.data(),
    st.integers(1, MAX_PANE),
    st.sampled_from(DIRECTIONS),
    st.floats(0.01, 0.99),
)
def test_a_split_pane_then_removed_gives_back_the_tree(
    tree: Node, data: st.DataObject, new: int, direction: Direction, share: float
) -> None:
    panes = list(panes_of(tree))
    assume(new not in panes)
    target = data.draw(st.sampled_from(panes))
    split = split_pane(tree, target, new, direction, share)
    at = panes.index(target) + 1
    assert list(panes_of(split)) == [*panes[:at], new, *panes[at:]]  # right of it, or below
    _check(split, [*panes, new], new)
    assert parse_layout(to_json(split)) == split  # its splits pass the parser's rules
    assert _rounded(without_pane(split, new)) == _rounded(tree)  # (its share given back)


def _rounded(node: Node | None) -> object:
    """The tree with its ratios to 9 places: a share taken and given back is as it was
    but for the last bits of a float."""
    if not isinstance(node, Split):
        return node
    return (
        node.direction,
        [round(r, 9) for r in node.ratios],
        [_rounded(c) for c in node.children],
    )


@pytest.mark.parametrize("share", [0.0, 1.0, -0.5, 1.5, math.nan])
def test_a_new_panes_share_outside_0_to_1_breaks_the_ratios_rule(share: float) -> None:
    with pytest.raises(LayoutError) as refused:
        split_pane(Leaf(1), 1, 2, "vertical", share)
    assert refused.value.rule == layout.RATIOS


def test_a_pane_split_the_way_its_split_runs_lines_up_in_it_instead_of_nesting() -> None:
    tree = Split("horizontal", (0.5, 0.5), (Leaf(1), Leaf(2)))
    assert split_pane(tree, 1, 3, "horizontal", 0.5) == Split(
        "horizontal", (0.25, 0.25, 0.5), (Leaf(1), Leaf(3), Leaf(2))
    )
    assert split_pane(tree, 2, 3, "vertical", 0.5) == Split(
        "horizontal", (0.5, 0.5), (Leaf(1), Split("vertical", (0.5, 0.5), (Leaf(2), Leaf(3))))
    )


def test_a_split_pane_takes_its_share_beside_the_target_only() -> None:
    tree = Split("vertical", (0.5, 0.5), (Leaf(1), Leaf(2)))
    assert split_pane(tree, 2, 3, "horizontal", 0.25) == Split(
        "vertical", (0.5, 0.5), (Leaf(1), Split("horizontal", (0.75, 0.25), (Leaf(2), Leaf(3))))
    )


@given(trees(), st.data(), st.integers(1, MAX_PANE))
def test_without_a_pane_every_other_pane_stays_once_in_a_valid_tree(
    tree: Node, data: st.DataObject, stranger: int
) -> None:
    panes = list(panes_of(tree))
    if stranger not in panes:
        assert without_pane(tree, stranger) == tree
    gone = data.draw(st.sampled_from(panes))
    pruned = without_pane(tree, gone)
    if len(panes) == 1:
        assert pruned is None
        return
    assert pruned is not None
    assert list(panes_of(pruned)) == [pane for pane in panes if pane != gone]
    assert parse_layout(to_json(pruned)) == pruned  # its splits pass the parser's rules
    _check(pruned, [pane for pane in panes if pane != gone], panes[1 if gone == panes[0] else 0])


THREE = Split("horizontal", (0.2, 0.3, 0.5), (Leaf(1), Leaf(2), Leaf(3)))


@pytest.mark.parametrize(
    ("gone", "left"),
    [
        (2, Split("horizontal", (0.5, 0.5), (Leaf(1), Leaf(3)))),  # to the one before
        (3, Split("horizontal", (0.2, 0.8), (Leaf(1), Leaf(2)))),
        (1, Split("horizontal", (0.5, 0.5), (Leaf(2), Leaf(3)))),  # first: to the one after
    ],
)
def test_a_panes_space_goes_to_the_sibling_before_it_or_after_it_when_first(
    gone: int, left: Node
) -> None:
    assert without_pane(THREE, gone) == left


def test_a_split_left_with_one_child_collapses_into_it() -> None:
    inner = Split("horizontal", (0.5, 0.5), (Leaf(2), Leaf(3)))
    tree = Split("vertical", (0.4, 0.6), (Leaf(1), inner))
    assert without_pane(tree, 3) == Split("vertical", (0.4, 0.6), (Leaf(1), Leaf(2)))
    assert without_pane(tree, 1) == inner
    assert without_pane(Leaf(1), 1) is None


@given(trees(), st.randoms(use_true_random=False))
def test_renamed_panes_are_all_renamed_in_place(tree: Node, random: Any) -> None:
    panes = list(panes_of(tree))
    new_ids = random.sample(range(1, 10 * len(panes) + 1), len(panes))
    renamed = dict(zip(panes, new_ids, strict=True))
    result = with_panes_renamed(tree, renamed)
    assert list(panes_of(result)) == new_ids
    assert with_panes_renamed(result, {new: old for old, new in renamed.items()}) == tree
