"""The snapshot schema: migration from version 0, and every rule that refuses a snapshot."""

import gc
import json
import os
from pathlib import Path
from typing import Any

import pytest

from mux.state.schema import SnapshotError, check_session
from mux.state.session_file import SnapshotRefused, parse_session, read_session, write_session
from mux.system.quarantine import REASON_XATTR, quarantine

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def v1() -> dict[str, Any]:
    data = json.loads((FIXTURES / "session-v0.json").read_text())
    data["version"] = 1
    for pane in data["panes"]:
        pane["cwd"] = {"path": pane["cwd"], "source": "shell", "captured_at": 1700000000.0}
    return data


def test_version_0_is_migrated() -> None:
    session = parse_session((FIXTURES / "session-v0.json").read_bytes())
    assert session.version == 1
    cwd = session.panes[0].cwd
    assert (cwd.path, cwd.source, cwd.captured_at) == ("/home/u/src", "launch", 0.0)
    assert session.windows[0].focused_pane == 2


def test_round_trip(tmp_path: Path) -> None:
    session = parse_session(json.dumps(v1()).encode())
    write_session(tmp_path / "state" / "session.json", session)
    assert read_session(tmp_path / "state" / "session.json", tmp_path / "q") == session
    assert read_session(tmp_path / "missing.json", tmp_path / "q") is None


def _break(change: str) -> dict[str, Any]:
    data = v1()
    window = data["windows"][0]
    nodes = {node["id"]: node for node in window["nodes"]}
    if change == "missing node":
        nodes[1]["children"] = [2, 9]
    elif change == "duplicate pane":
        data["panes"][1]["id"] = 1
    elif change == "unreachable focus":
        window["focused_pane"] = 5
    elif change == "cycle":
        nodes[3].update(kind="split", direction="horizontal", children=[1, 2], ratios=[0.5, 0.5])
        del nodes[3]["pane"]
    elif change == "orphaned node":
        window["nodes"].append({"id": 4, "kind": "pane", "pane": 2})
        nodes[1]["children"] = [2, 3]
    elif change == "unplaced pane":
        data["panes"].append(dict(data["panes"][0], id=3, invocation="c3"))
    elif change == "bad ratios":
        nodes[1]["ratios"] = [0.5, 0.6]
    elif change == "two parents":
        nodes[1]["children"] = [2, 3, 2]
        nodes[1]["ratios"] = [0.25, 0.5, 0.25]
    elif change == "missing root":
        window["root"] = 42
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("missing node", "names node 9, which does not exist"),
        ("duplicate pane", "pane id 1 appears twice"),
        ("unreachable focus", "focused pane 5 is not in its layout (unreachable focus)"),
        ("cycle", "cycle through node 1"),
        ("orphaned node", "node 4 is orphaned"),
        ("unplaced pane", "pane 3 is in no window's layout"),
        ("bad ratios", "add up to 1.1"),
        ("missing root", "root node 42 does not exist"),
        ("two parents", "node 2 has two parents"),
    ],
)
def test_each_rule_names_the_problem(change: str, message: str) -> None:
    with pytest.raises(SnapshotError) as refused:
        parse_session(json.dumps(_break(change)).encode())
    assert message in str(refused.value)


def deep_layout(depth: int) -> dict[str, Any]:
    """One window of `depth` nested splits, each of a pane and the next split."""
    data = v1()
    pane = data["panes"][0]
    data["panes"] = [dict(pane, id=n, invocation=f"c{n}") for n in range(1, depth + 2)]
    nodes: list[dict[str, Any]] = []
    for level in range(depth):
        split, leaf = 2 * level + 1, 2 * level + 2
        nxt = 2 * level + 3
        nodes.append(
            {
                "id": split,
                "kind": "split",
                "direction": "horizontal",
                "children": [leaf, nxt],
                "ratios": [0.5, 0.5],
            }
        )
        nodes.append({"id": leaf, "kind": "pane", "pane": level + 1})
    nodes.append({"id": 2 * depth + 1, "kind": "pane", "pane": depth + 1})
    data["windows"] = [dict(data["windows"][0], root=1, nodes=nodes, focused_pane=1)]
    return data


def test_a_deep_layout_is_checked_without_recursion_and_leaves_no_garbage_cycles() -> None:
    text = json.dumps(deep_layout(3000)).encode()
    gc.collect()
    gc.disable()
    try:
        session = parse_session(text)  # no RecursionError
        assert [n.pane for n in session.windows[0].nodes if n.kind == "pane"][-1] == 3001
        check_session(session)
        del session
        # A snapshot checks every window's layout each time: nothing of it may be
        # left for the collector (it was, and full collections paused muxd).
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_bad_focus_is_never_replaced_by_a_guess() -> None:
    with pytest.raises(SnapshotError):
        parse_session(json.dumps(_break("unreachable focus")).encode())


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{not json", "not valid JSON"),
        (b"[]", "not a JSON object"),
        (json.dumps({**v1(), "version": 2}).encode(), "version 2, newer than this mux reads"),
        (json.dumps(_break("cycle")).encode(), "cycle"),
    ],
)
def test_bad_files_are_quarantined_not_repaired(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    path = tmp_path / "session.json"
    path.write_bytes(content)
    with pytest.raises(SnapshotRefused) as refused:
        read_session(path, tmp_path / "quarantine")
    assert reason in refused.value.reason
    assert not path.exists()
    moved = refused.value.quarantined_as
    assert moved.parent == tmp_path / "quarantine"
    assert moved.read_bytes() == content, "moved as it was"
    try:
        recorded = os.getxattr(moved, REASON_XATTR).decode()
    except OSError:
        recorded = reason  # no user xattrs on this file system: the log has the reason
    assert reason in recorded


def test_quarantine_never_overwrites(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for path, content in ((first, b"one"), (second, b"two")):
        path.write_bytes(content)
    q = tmp_path / "q"
    moved_first = quarantine(first, q, "bad")
    second.rename(tmp_path / "a")  # same name, same second
    moved_second = quarantine(tmp_path / "a", q, "bad too")
    assert moved_first != moved_second
    assert (moved_first.read_bytes(), moved_second.read_bytes()) == (b"one", b"two")
