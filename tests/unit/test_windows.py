"""A pane table's windows (SPEC §11): a window per first pane, splits of the focused
pane, a pane closed giving its space back, a client's changes checked whole and made
at once (or refused with nothing changed), saved windows taken back; and the checks
of SetWindow's and SplitPane's arguments."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import pytest
from dbus_fast import Variant

from mux.panes.handover import WindowRecord
from mux.panes.windows import Placement, Window, Windows
from mux.protocol import layout
from mux.protocol.errors import InvalidArgument
from mux.protocol.layout import Leaf, Node, Split, to_json
from mux.protocol.window_options import WindowUpdate, parse_split, parse_window_update

W = 10  # the window under test
OTHER = 20  # another window, holding pane 4
Size = tuple[int, int]  # (rows, cols)


@dataclass(frozen=True)
class Told:
    """One observer call, with the window as it was then."""

    what: str
    window: int
    layout: Node
    focus: int
    title: str = ""
    geometry: dict[str, int | str] = field(default_factory=dict)


class Recorder:
    def __init__(self) -> None:
        self.told: list[Told] = []

    def _note(self, what: str, w: Window) -> None:
        self.told.append(Told(what, w.id, w.layout, w.focused_pane, w.title, dict(w.geometry)))

    def window_added(self, window: Window) -> None:
        self._note("added", window)

    def window_changed(self, window: Window) -> None:
        self._note("changed", window)

    def window_removed(self, window: Window) -> None:
        self._note("removed", window)


def _windows(sizes: dict[int, Size] | None = None) -> tuple[Windows, Recorder]:
    """Windows whose panes are 24 rows by 80 columns unless `sizes` says otherwise."""
    windows = Windows(lambda pane: (sizes or {}).get(pane, (24, 80)))
    recorder = Recorder()
    windows.observers.append(recorder)
    return windows, recorder


def _split(direction: str, ratios: tuple[float, ...], *panes: int | Node) -> Split:
    children = tuple(Leaf(p) if isinstance(p, int) else p for p in panes)
    return layout.split_node("vertical" if direction == "v" else "horizontal", ratios, children)


def _flat(*panes: int, ratio: float | None = None) -> str:
    """A horizontal split of `panes` (in equal parts unless `ratio` each), as JSON."""
    ratios = [ratio or 1 / len(panes)] * len(panes)
    leaves = [{"pane": pane} for pane in panes]
    return json.dumps({"split": "horizontal", "ratios": ratios, "children": leaves})


THREE = _split("h", (0.2, 0.3, 0.5), 1, 2, 3)


def _three_and_other() -> tuple[Windows, Recorder]:
    """Window W: panes 1, 2, 3 side by side (0.2, 0.3, 0.5), focus on 2; OTHER: pane 4."""
    windows, recorder = _windows()
    for pane in (1, 2, 3):
        windows.place(pane, W)
    windows.place(4, OTHER)
    windows.update(W, WindowUpdate(layout=THREE, focused_pane=2))
    recorder.told.clear()
    return windows, recorder


def _state(window: Window) -> tuple[Node, int, str, dict[str, int | str]]:
    return window.layout, window.focused_pane, window.title, dict(window.geometry)


# -- panes placed ------------------------------------------------------------------


def test_a_first_pane_makes_a_new_window_focused_on_it() -> None:
    windows, recorder = _windows()
    windows.place(1, W)
    windows.place(2, OTHER)
    assert W in windows and OTHER in windows and len(windows) == 2
    assert windows.get(W).layout == Leaf(1) and windows.get(W).focused_pane == 1
    assert (windows.window_of(1), windows.window_of(2), windows.window_of(3)) == (W, OTHER, None)
    assert recorder.told == [Told("added", W, Leaf(1), 1), Told("added", OTHER, Leaf(2), 2)]


@pytest.mark.parametrize(
    ("size", "direction"),
    [((24, 80), "h"), ((40, 60), "v"), ((24, 48), "v"), ((24, 49), "h")],
)
def test_a_second_pane_halves_the_focused_one_along_its_longer_side_and_takes_focus(
    size: Size, direction: str
) -> None:
    windows, recorder = _windows({1: size})
    windows.place(1, W)
    windows.place(2, W)
    halves = _split(direction, (0.5, 0.5), 1, 2)
    assert (windows.get(W).layout, windows.get(W).focused_pane) == (halves, 2)
    assert recorder.told[1:] == [Told("changed", W, halves, 2)]


def test_a_third_pane_splits_the_pane_focused_then_the_last_one_placed() -> None:
    windows, _ = _windows({1: (24, 80), 2: (24, 40)})
    for pane in (1, 2, 3):
        windows.place(pane, W)
    assert windows.get(W).layout == _split("h", (0.5, 0.5), 1, _split("v", (0.5, 0.5), 2, 3))
    assert windows.get(W).focused_pane == 3


def test_a_placement_is_honoured_whichever_pane_has_the_focus() -> None:
    windows, recorder = _windows()
    windows.place(1, W)
    windows.place(2, W)
    recorder.told.clear()
    windows.place(3, W, Placement(beside=1, direction="vertical", share=0.25))
    expected = _split("h", (0.5, 0.5), _split("v", (0.75, 0.25), 1, 3), 2)
    assert recorder.told == [Told("changed", W, expected, 3)]
    assert windows.window_of(3) == W


# -- panes removed ---------------------------------------------------------------------


def test_a_closed_pane_gives_its_space_and_focus_to_the_pane_before_it() -> None:
    windows, recorder = _three_and_other()
    windows.remove(2)
    left = _split("h", (0.5, 0.5), 1, 3)
    assert recorder.told == [Told("changed", W, left, 1)]
    assert windows.window_of(2) is None


def test_a_closed_first_pane_gives_its_space_and_focus_to_the_pane_after_it() -> None:
    windows, recorder = _three_and_other()
    windows.update(W, WindowUpdate(focused_pane=1))
    recorder.told.clear()
    windows.remove(1)
    assert recorder.told == [Told("changed", W, _split("h", (0.5, 0.5), 2, 3), 2)]


def test_a_closed_pane_without_the_focus_leaves_the_focus_where_it_was() -> None:
    windows, recorder = _three_and_other()
    windows.remove(3)
    assert recorder.told == [Told("changed", W, _split("h", (0.2, 0.8), 1, 2), 2)]


def test_a_split_left_with_one_pane_collapses_and_the_last_pane_ends_the_window() -> None:
    windows, recorder = _three_and_other()
    windows.remove(2)
    windows.remove(1)
    assert windows.get(W).layout == Leaf(3) and windows.get(W).focused_pane == 3
    recorder.told.clear()
    windows.remove(3)
    assert recorder.told == [Told("removed", W, Leaf(3), 3)]
    assert W not in windows and len(windows) == 1 and [w.id for w in windows] == [OTHER]
    with pytest.raises(InvalidArgument, match=f"there is no window {W}"):
        windows.get(W)


def test_closing_an_unknown_pane_or_an_update_that_changes_nothing_tells_nothing() -> None:
    windows, recorder = _three_and_other()
    windows.remove(99)
    windows.update(W, WindowUpdate(focused_pane=2))  # already focused
    windows.update(W, WindowUpdate(title=""))  # already so
    assert recorder.told == []
    windows.update(W, WindowUpdate(focused_pane=3))
    assert recorder.told == [Told("changed", W, THREE, 3)]


# -- a client's changes -----------------------------------------------------------------


def _set_window(windows: Windows, window_id: int, props: dict[str, tuple[str, object]]) -> None:
    """What SetWindow does with its arguments."""
    windows.update(window_id, parse_window_update(props))


def test_a_valid_update_changes_everything_at_once_and_tells_once() -> None:
    windows, recorder = _three_and_other()
    new = _split("v", (0.6, 0.4), 3, _split("h", (0.5, 0.5), 2, 1))
    geometry = {"x": Variant("i", -5), "width": Variant("u", 800), "monitor": Variant("s", "DP-1")}
    props: dict[str, tuple[str, object]] = {
        "layout": ("s", to_json(new)),
        "focused_pane": ("t", 1),
        "title": ("s", "work"),
        "geometry": ("a{sv}", geometry),
    }
    _set_window(windows, W, props)
    told = Told("changed", W, new, 1, "work", {"x": -5, "width": 800, "monitor": "DP-1"})
    assert recorder.told == [told]
    assert _state(windows.get(W)) == (told.layout, told.focus, told.title, told.geometry)
    _set_window(windows, W, {"title": ("s", "again")})  # the rest stays
    assert _state(windows.get(W)) == (new, 1, "again", told.geometry)


ONE_CHILD = json.dumps({"split": "vertical", "ratios": [1], "children": [{"pane": 1}]})
BAD_UPDATES: dict[str, tuple[str | None, int | None, str, str]] = {
    # kind: (layout, focus, the rule, words of the message)
    "not JSON": ("{", None, layout.MALFORMED, "not JSON"),
    "a list": ("[1, 2, 3]", None, layout.MALFORMED, "object"),
    "a pane 0": ('{"pane": 0}', None, layout.MALFORMED, "positive"),
    "one child": (ONE_CHILD, None, layout.TWO_CHILDREN, "1 children"),
    "ratios over 1": (_flat(1, 2, 3, ratio=0.5), None, layout.RATIOS, "add up"),
    "a pane twice": (_flat(1, 2, 2), None, layout.PANE_TWICE, "pane 2 appears twice"),
    "a pane missing": (_flat(1, 2), None, layout.PANE_MISSING, "pane 3 of window 10"),
    "another window's pane": (_flat(1, 2, 3, 4), None, layout.FOREIGN_PANE, "in window 20"),
    "no such pane": (_flat(1, 2, 3, 99), None, layout.FOREIGN_PANE, "99 does not exist"),
    "focus in another window": (None, 4, layout.FOCUS, "focused pane 4"),
    "focus on no pane": (None, 99, layout.FOCUS, "focused pane 99"),
    "focus outside a new layout": (_flat(3, 2, 1), 4, layout.FOCUS, "focused pane 4"),
}


@pytest.mark.parametrize("kind", BAD_UPDATES)
def test_a_bad_layout_or_focus_is_refused_naming_the_rule_with_nothing_changed(kind: str) -> None:
    text, focus, rule, words = BAD_UPDATES[kind]
    windows, recorder = _three_and_other()
    before = _state(windows.get(W))
    props: dict[str, tuple[str, object]] = {
        "title": ("s", "not taken"),
        "geometry": ("a{sv}", {"x": Variant("i", 3)}),
    }
    if text is not None:
        props["layout"] = ("s", text)
    if focus is not None:
        props["focused_pane"] = ("t", focus)
    with pytest.raises(InvalidArgument) as refused:
        _set_window(windows, W, props)
    assert f"breaks the rule '{rule}'" in str(refused.value)
    assert words in str(refused.value)
    assert _state(windows.get(W)) == before == (THREE, 2, "", {})
    assert recorder.told == []


def test_an_update_of_an_unknown_window_is_refused() -> None:
    windows, recorder = _three_and_other()
    with pytest.raises(InvalidArgument, match="there is no window 99"):
        windows.update(99, WindowUpdate(title="x"))
    assert recorder.told == []


# -- saved windows -------------------------------------------------------------------------


def test_a_saved_layout_naming_panes_that_are_gone_is_pruned_and_they_are_returned() -> None:
    windows, recorder = _windows()
    windows.place(1, W)
    windows.place(2, W)
    recorder.told.clear()
    saved = _split("v", (0.2, 0.3, 0.5), 1, 7, _split("h", (0.5, 0.5), 2, 8))
    assert windows.take_saved(W, saved, 1, "saved", {"monitor": "DP-1"}) == [7, 8]
    kept = _split("v", (0.5, 0.5), 1, 2)
    assert recorder.told == [Told("changed", W, kept, 1, "saved", {"monitor": "DP-1"})]


def test_a_saved_focus_that_is_gone_leaves_the_windows_own() -> None:
    windows, _ = _windows()
    windows.place(1, W)
    windows.place(2, W)
    saved = _split("h", (0.3, 0.7), 2, 7)
    windows.take_saved(W, _split("v", (0.5, 0.5), 1, saved), 7, "", {})
    assert windows.get(W).layout == _split("v", (0.5, 0.5), 1, 2)
    assert windows.get(W).focused_pane == 2


def test_a_saved_layout_without_a_pane_the_window_has_is_not_taken() -> None:
    windows, _ = _windows()
    for pane in (1, 2, 3):
        windows.place(pane, W)
    own = windows.get(W).layout
    assert windows.take_saved(W, _split("h", (0.5, 0.5), 1, 2), 1, "kept title", {}) == []
    assert _state(windows.get(W)) == (own, 1, "kept title", {})


def test_records_taken_back_give_the_same_windows() -> None:
    windows, _ = _three_and_other()
    geometry = {"x": Variant("i", 1), "height": Variant("u", 600)}
    _set_window(windows, W, {"title": ("s", "w"), "geometry": ("a{sv}", geometry)})
    records = [WindowRecord.model_validate_json(r.model_dump_json()) for r in windows.records()]
    again, recorder = _windows()
    for pane, window in ((1, W), (2, W), (3, W), (4, OTHER), (5, 30)):
        again.place(pane, window)
    recorder.told.clear()
    again.take_records([*records, records[0].model_copy(update={"id": 40})])  # 40: no panes
    assert again.records()[:2] == records
    assert _state(again.get(W)) == (THREE, 2, "w", {"x": 1, "height": 600})
    assert [told.window for told in recorder.told] == [W], "OTHER was already as recorded"
    assert again.get(30).layout == Leaf(5) and 40 not in again


def test_records_taken_back_without_a_pane_prune_it() -> None:
    windows, _ = _three_and_other()
    records = windows.records()
    again, _ = _windows()
    for pane in (1, 3):
        again.place(pane, W)
    again.take_records(records)
    assert _state(again.get(W)) == (_split("h", (0.5, 0.5), 1, 3), 3, "", {})  # focus: its own


def test_observers_of_a_kind_are_removed() -> None:
    windows, first = _windows()
    windows.remove_observers(Recorder)
    second = Recorder()
    windows.observers.append(second)
    windows.place(1, W)
    assert (first.told, len(second.told)) == ([], 1)
    windows.remove_observers(Recorder)
    windows.remove(1)
    assert len(second.told) == 1 and windows.observers == []


# -- SetWindow's and SplitPane's arguments -----------------------------------------------


def test_set_window_arguments_are_read_into_an_update() -> None:
    assert parse_window_update({}) == WindowUpdate()
    title = "é" * 2048  # 4096 bytes: the most a title may have
    props: dict[str, tuple[str, object]] = {
        "title": ("s", title),
        "geometry": ("a{sv}", {"y": Variant("i", 7), "monitor": Variant("s", "HDMI-1")}),
        "layout": ("s", '{"pane": 3}'),
        "focused_pane": ("t", 3),
    }
    assert parse_window_update(props) == WindowUpdate(
        title, {"y": 7, "monitor": "HDMI-1"}, Leaf(3), 3
    )


BAD_PROPS: dict[str, tuple[dict[str, tuple[str, object]], str]] = {
    "an unknown key": ({"colour": ("s", "red")}, "no key 'colour'"),
    "a title of another type": ({"title": ("i", 3)}, "'title' is of type 's', not 'i'"),
    "a focus of another type": ({"focused_pane": ("u", 3)}, "'focused_pane' is of type 't'"),
    "a NUL in the title": ({"title": ("s", "a\x00b")}, "no NUL"),
    "a title too long": ({"title": ("s", "é" * 2048 + "a")}, "4096 bytes"),
    "an unknown geometry key": (
        {"geometry": ("a{sv}", {"depth": Variant("i", 3)})},
        "geometry has no key 'depth'",
    ),
    "a geometry value of another type": (
        {"geometry": ("a{sv}", {"x": Variant("s", "3")})},
        "geometry 'x' is of type 'i', not 's'",
    ),
    "a signed width": (
        {"geometry": ("a{sv}", {"width": Variant("i", 3)})},
        "'width' is of type 'u'",
    ),
    "a malformed layout": ({"layout": ("s", '{"pane": true}')}, "the rule 'shape'"),
    "a layout of bad ratios": ({"layout": ("s", _flat(1, 2, ratio=0.7))}, "'ratios'"),
}


@pytest.mark.parametrize("kind", BAD_PROPS)
def test_bad_set_window_arguments_are_refused_saying_why(kind: str) -> None:
    props, words = BAD_PROPS[kind]
    with pytest.raises(InvalidArgument) as refused:
        parse_window_update(props)
    assert words in str(refused.value)


def test_split_pane_arguments_are_a_direction_and_a_share_strictly_between_0_and_1() -> None:
    assert parse_split("vertical", 0.3) == ("vertical", 0.3)
    assert parse_split("horizontal", 0.999) == ("horizontal", 0.999)


@pytest.mark.parametrize(
    ("direction", "share", "words"),
    [
        ("diagonal", 0.5, "not 'diagonal'"),
        ("Horizontal", 0.5, "not 'Horizontal'"),
        ("vertical", 0.0, "not 0"),
        ("vertical", 1.0, "not 1"),
        ("vertical", 1.5, "not 1.5"),
        ("vertical", -0.5, "not -0.5"),
        ("vertical", math.nan, "not nan"),
    ],
)
def test_bad_split_pane_arguments_are_refused(direction: str, share: float, words: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse_split(direction, share)
    assert words in str(refused.value)
