"""docs/windows.md: windows with split layouts over D-Bus, through our client, busctl
and gdbus, and muxctl's split and windows; every pane a real program on a real PTY."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dbus_fast import Variant

from mux.state.session_file import parse_session
from tests.harness import BusMonitor, Service, gdbus_refused, refused, wait_for

WINDOW = "org.mux.Mux1.Window"
SLEEP = ["sleep", "100000"]


def window_path(window_id: int) -> str:
    return f"/org/mux/Mux1/window/{window_id}"


def windows(service: Service) -> dict[int, dict[str, Any]]:
    (entries,) = service.call("ListWindows")
    out = {}
    for entry in entries:
        plain = {key: variant.value for key, variant in entry.items()}
        plain["layout"] = json.loads(plain["layout"])
        out[int(plain["id"])] = plain
    return out


def split(service: Service, pane: int, direction: str, ratio: float = 0.5) -> int:
    options = {"argv": Variant("as", SLEEP)}
    new, _instance, _path = service.call("SplitPane", "tsda{sv}", [pane, direction, ratio, options])
    return int(new)


def set_window(service: Service, window: int, **props: Variant) -> None:
    service.call("SetWindow", "ta{sv}", [window, props])


def leaf(pane: int) -> dict[str, Any]:
    return {"pane": pane}


def node(direction: str, ratios: list[float], *children: dict[str, Any]) -> dict[str, Any]:
    return {"split": direction, "ratios": ratios, "children": list(children)}


def test_splits_nest_and_list_windows_shows_the_tree(service: Service) -> None:
    first = service.spawn(SLEEP)
    window = service.panes()[first]["window"]
    right = split(service, first, "horizontal", 0.25)
    below = split(service, right, "vertical")
    listed = windows(service)[window]
    assert listed["layout"] == node(
        "horizontal",
        [0.75, 0.25],
        leaf(first),
        node("vertical", [0.5, 0.5], leaf(right), leaf(below)),
    )
    assert listed["focused_pane"] == below, "a new pane takes the focus, as in tmux"
    assert {service.panes()[p]["window"] for p in (first, right, below)} == {window}
    # busctl reads the window object's properties, as any client does.
    out = service.busctl("get-property", "org.mux.Mux1", window_path(window), WINDOW, "Layout")
    assert json.loads(json.loads(out.stdout.split(" ", 1)[1])) == listed["layout"]
    focus = service.busctl(
        "get-property", "org.mux.Mux1", window_path(window), WINDOW, "FocusedPane"
    )
    assert focus.stdout.split() == ["t", str(below)]


def test_spawn_into_a_window_splits_its_focused_pane_along_its_longer_side(
    service: Service,
) -> None:
    wide = service.spawn(SLEEP, rows=24, cols=80)
    window = service.panes()[wide]["window"]
    second = service.spawn(SLEEP, window=window, rows=40, cols=40)
    third = service.spawn(SLEEP, window=window)
    assert windows(service)[window]["layout"] == node(
        "horizontal",
        [0.5, 0.5],
        leaf(wide),
        node("vertical", [0.5, 0.5], leaf(second), leaf(third)),
    )
    lone = service.spawn(SLEEP)
    assert service.panes()[lone]["window"] not in (0, window), "no window: a new one"


@pytest.mark.parametrize("remain", [False, True], ids=["closes", "remain_on_exit"])
def test_a_pane_whose_program_ends_in_a_split(tmp_root: Path, remain: bool) -> None:
    """As tmux: its sibling takes the space and the focus (PaneExited still says how it
    ended); `remain_on_exit = true` keeps it, exited, in its place. A pane alone in its
    window stays either way, with its last screen and status."""
    config = f"remain_on_exit = {'true' if remain else 'false'}\n"
    svc = Service(tmp_root, bus_address=None, config=config).start()
    try:
        left = svc.spawn(SLEEP)
        window = svc.panes()[left]["window"]
        ending = svc.call(
            "SplitPane",
            "tsda{sv}",
            [left, "horizontal", 0.5, {"argv": Variant("as", ["sh", "-c", "read x; exit 3"])}],
        )[0]
        lone = svc.spawn(["sh", "-c", "read x; exit 4"])
        with BusMonitor(svc.bus_address) as monitor:
            svc.call("SendInput", "tay", [ending, b"\r"])
            svc.call("SendInput", "tay", [lone, b"\r"])
            monitor.wait_signal("PaneExited", lambda m: m.body == [ending, 3])
            monitor.wait_signal("PaneExited", lambda m: m.body == [lone, 4])
        if remain:
            assert svc.panes()[ending]["state"] == "exited"
            assert windows(svc)[window]["layout"] == node(
                "horizontal", [0.5, 0.5], leaf(left), leaf(ending)
            )
        else:
            wait_for(lambda: ending not in svc.panes(), what="the ended pane to close")
            assert windows(svc)[window]["layout"] == leaf(left)
            assert windows(svc)[window]["focused_pane"] == left
        assert svc.panes()[lone]["state"] == "exited", "alone in its window: it stays"
    finally:
        svc.stop()


def test_a_split_that_would_leave_a_pane_too_small_is_refused(service: Service) -> None:
    """Each pane of a split keeps at least 10 columns or 2 rows, the line between them
    aside (seven splits of a 59-column pane once made panes one column wide)."""
    options = {"argv": Variant("as", SLEEP)}
    narrow = service.spawn(SLEEP, rows=24, cols=20)
    message = refused(
        service, "PreconditionFailed", "SplitPane", "tsda{sv}", [narrow, "horizontal", 0.5, options]
    ).message
    assert f"pane {narrow} is too small" in message and "at least 10" in message
    low = service.spawn(SLEEP, rows=4, cols=80)
    message = gdbus_refused(
        service, "PreconditionFailed", "org.mux.Mux1.Manager.SplitPane", str(low), "vertical",
        "0.5", "{}",
    )  # fmt: skip
    assert "at least 2" in message
    assert len(service.panes()) == 2, "nothing started"
    wide = service.spawn(SLEEP, rows=5, cols=21)
    split(service, wide, "horizontal")
    split(service, wide, "vertical")


def test_set_window_round_trips_title_geometry_layout_and_focus(service: Service) -> None:
    a = service.spawn(SLEEP)
    window = service.panes()[a]["window"]
    b = split(service, a, "horizontal")
    layout = node("vertical", [0.3, 0.7], leaf(b), leaf(a))
    geometry = {
        "x": Variant("i", -20),
        "y": Variant("i", 40),
        "width": Variant("u", 1200),
        "height": Variant("u", 800),
        "monitor": Variant("s", "DP-1"),
    }
    set_window(
        service,
        window,
        title=Variant("s", "build"),
        geometry=Variant("a{sv}", geometry),
        layout=Variant("s", json.dumps(layout)),
        focused_pane=Variant("t", a),
    )
    listed = windows(service)[window]
    assert listed["title"] == "build"
    assert listed["layout"] == layout
    assert listed["focused_pane"] == a
    assert {key: value.value for key, value in listed["geometry"].items()} == {
        "x": -20,
        "y": 40,
        "width": 1200,
        "height": 800,
        "monitor": "DP-1",
    }
    # gdbus, another client library: the title alone, and it reads back.
    service.gdbus_call("org.mux.Mux1.Manager.SetWindow", str(window), "{'title': <'tests'>}")
    title = service.gdbus_call(
        "org.freedesktop.DBus.Properties.Get", WINDOW, "Title", path=window_path(window)
    )
    assert "'tests'" in title.stdout
    assert windows(service)[window]["layout"] == layout, "what was not given is unchanged"


def pair(first: str, second: str, ratios: str = "[0.5, 0.5]", way: str = "vertical") -> str:
    """A split of two as JSON text; A, B (the window's panes) and O (another window's)
    are put in by the test."""
    return (
        f'{{"split": "{way}", "ratios": {ratios}, '
        f'"children": [{{"pane": {first}}}, {{"pane": {second}}}]}}'
    )


@pytest.mark.parametrize(
    ("layout", "rule"),
    [
        ("{not json", "shape"),
        ('{"pane": A, "extra": 2}', "shape"),
        (pair("A", "B", way="diagonal"), "shape"),
        (pair("A", "true"), "shape"),
        (pair("A", "B", ratios="[0.6, 0.6]"), "ratios"),
        (pair("A", "B", ratios="[1.0, 0.0]"), "ratios"),
        (pair("A", "B", ratios='["half", 0.5]'), "shape"),
        ('{"split": "vertical", "ratios": [1.0], "children": [{"pane": A}]}', "two children"),
        (pair("A", "A"), "each pane once"),
        ('{"pane": A}', "every pane of the window"),
        (pair("A", "O"), "only the window's panes"),
        (pair("A", "99999"), "only the window's panes"),
    ],
)
def test_every_layout_rule_is_refused_by_name_and_nothing_changes(
    service: Service, layout: str, rule: str
) -> None:
    a = service.spawn(SLEEP)
    window = service.panes()[a]["window"]
    b = split(service, a, "vertical")
    other = service.spawn(SLEEP)
    before = windows(service)
    text = layout.replace("A", str(a)).replace("B", str(b)).replace("O", str(other))
    error = refused(
        service,
        "InvalidArgument",
        "SetWindow",
        "ta{sv}",
        [window, {"layout": Variant("s", text), "title": Variant("s", "changed?")}],
    )
    assert f"'{rule}'" in error.message
    assert windows(service) == before, "a refused change changes nothing, the title neither"


def test_a_focus_outside_the_window_an_unknown_window_and_bad_keys_are_refused(
    service: Service,
) -> None:
    a = service.spawn(SLEEP)
    window = service.panes()[a]["window"]
    other = service.spawn(SLEEP)
    before = windows(service)
    error = refused(
        service,
        "InvalidArgument",
        "SetWindow",
        "ta{sv}",
        [window, {"focused_pane": Variant("t", other)}],
    )
    assert "'focus in the window'" in error.message
    error = refused(
        service, "InvalidArgument", "SetWindow", "ta{sv}", [9999, {"title": Variant("s", "x")}]
    )
    assert "there is no window 9999" in error.message
    message = gdbus_refused(
        service,
        "InvalidArgument",
        "org.mux.Mux1.Manager.SetWindow",
        str(window),
        "{'colour': <'red'>}",
    )
    assert "colour" in message
    message = gdbus_refused(
        service,
        "InvalidArgument",
        "org.mux.Mux1.Manager.SetWindow",
        str(window),
        "{'geometry': <{'width': <'wide'>}>}",
    )
    assert "width" in message
    error = refused(service, "InvalidArgument", "SplitPane", "tsda{sv}", [a, "sideways", 0.5, {}])
    assert "sideways" in error.message
    error = refused(service, "InvalidArgument", "SplitPane", "tsda{sv}", [a, "vertical", 1.0, {}])
    assert "between 0 and 1" in error.message
    refused(service, "NoSuchPane", "SplitPane", "tsda{sv}", [424242, "vertical", 0.5, {}])
    assert windows(service) == before
    assert len(service.panes()) == 2, "no pane was started by a refused split"


def test_closing_panes_collapses_the_tree_and_the_last_one_ends_the_window(
    service: Service,
) -> None:
    a = service.spawn(SLEEP)
    window = service.panes()[a]["window"]
    b = split(service, a, "horizontal")
    c = split(service, b, "vertical")
    with BusMonitor(service.bus_address) as monitor:
        service.call("Kill", "t", [b])
        assert windows(service)[window]["layout"] == node(
            "horizontal", [0.5, 0.5], leaf(a), leaf(c)
        ), "the split left with one child is replaced by it"
        monitor.wait_signal("WindowChanged", lambda m: m.body == [window])
        service.call("Kill", "t", [c])
        assert windows(service)[window]["layout"] == leaf(a)
        assert windows(service)[window]["focused_pane"] == a
        service.call("Kill", "t", [a])
        assert window not in windows(service)
        monitor.wait_signal("InterfacesRemoved", lambda m: m.body[0] == window_path(window))
    tree = service.busctl("tree", "org.mux.Mux1").stdout
    assert "/org/mux/Mux1" in tree
    assert window_path(window) not in tree


def test_window_changed_and_properties_changed_follow_a_split(service: Service) -> None:
    a = service.spawn(SLEEP)
    window = service.panes()[a]["window"]
    with BusMonitor(service.bus_address) as monitor:
        b = split(service, a, "horizontal")
        monitor.wait_signal("WindowChanged", lambda m: m.body == [window])
        changed = monitor.wait_signal(
            "PropertiesChanged", lambda m: m.body[0] == WINDOW, path=window_path(window)
        )
        assert set(changed.body[1]) == {"Layout", "FocusedPane"}
        assert changed.body[1]["FocusedPane"].value == b


def test_muxctl_split_and_windows(service: Service) -> None:
    a = service.spawn(SLEEP)
    window = service.panes()[a]["window"]
    made = service.muxctl(
        "split", str(a), "--horizontal", "--ratio", "0.4", "--", *SLEEP, check=True
    )
    b = int(made.stdout)
    below = int(service.muxctl("split", str(b), "--", *SLEEP, check=True).stdout)
    table = service.muxctl("windows", check=True).stdout.splitlines()
    assert table[0].split() == ["WINDOW", "PANES", "FOCUSED", "LAYOUT", "TITLE"]
    assert table[1].split() == [
        str(window),
        str(a),
        str(b),
        str(below),
        str(below),
        f"h({a},v({b},{below}))",
    ]
    listed = json.loads(service.muxctl("windows", "--json", check=True).stdout)
    assert listed[0]["layout"]["ratios"] == [0.6, 0.4]
    bad = service.muxctl("split", str(a), "--ratio", "1.5")
    assert bad.returncode == 2 and "--ratio" in bad.stderr
    ls = service.muxctl("ls", check=True).stdout
    assert ls.splitlines()[0].split()[:2] == ["ID", "WIN"]
    wait_for(lambda: len(service.panes()) == 3, what="three panes")


def test_a_layout_taken_within_the_tolerance_is_saved_and_read_back(service: Service) -> None:
    a = service.spawn(SLEEP)
    window = service.panes()[a]["window"]
    b = split(service, a, "horizontal")
    c = split(service, b, "horizontal")
    thirds = node("horizontal", [0.3333, 0.3333, 0.3333], leaf(a), leaf(b), leaf(c))
    set_window(service, window, layout=Variant("s", json.dumps(thirds)))
    path, _ = service.call("Snapshot")
    saved = parse_session(Path(path).read_bytes())  # the rules a restart reads it with
    assert [n.ratios for n in saved.windows[0].nodes if n.kind == "split"] == [[0.3333] * 3]


def test_a_window_change_alone_is_saved_by_the_autosave(service: Service) -> None:
    a = service.spawn(SLEEP)
    window = service.panes()[a]["window"]
    path, _ = service.call("Snapshot")
    with BusMonitor(service.bus_address) as monitor:
        set_window(service, window, title=Variant("s", "renamed"))
        monitor.wait_signal("SnapshotSaved")
    assert [w.title for w in parse_session(Path(path).read_bytes()).windows] == ["renamed"]
