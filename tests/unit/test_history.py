"""The history of snapshots (`<state>/history/`): what is archived, how it is thinned with
an injected clock, hard-linked contents, and entries a crash, a careless hand or a hostile
name left behind."""

import errno
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mux.protocol.errors import InvalidArgument, Unavailable
from mux.state.history import SnapshotHistory
from mux.state.history_records import restorable_view, snapshot_record, summary
from mux.state.schema import Session
from mux.state.session_file import session_bytes
from mux.state.thinning import ThinningEntry, history_bytes, to_remove
from mux.system.durable import FileOps

HOUR = 3600.0
DAY = 86400.0
START = 1_700_000_000.0  # a Tuesday, 22:13:20 UTC: not on an hour's boundary


@dataclass(frozen=True)
class Limits:
    history_keep_all_seconds: float = HOUR
    history_hourly_seconds: float = 2 * DAY
    history_daily_seconds: float = 14 * DAY
    history_max_snapshots: int = 200
    history_max_bytes: int = 256 << 20


class Clock:
    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def pane(pane_id: int = 1, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": pane_id,
        "kind": "shell",
        "argv": ["/bin/bash"],
        "program": "/bin/bash",
        "cwd": {"path": "/home/u/src", "source": "shell", "captured_at": START},
        "title": "bash",
        "rows": 24,
        "cols": 80,
        "invocation": f"i{pane_id}",
    }
    data.update(changes)
    return data


def window(pane_id: int, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": pane_id,
        "title": "",
        "nodes": [{"id": 1, "kind": "pane", "pane": pane_id}],
        "root": 1,
        "focused_pane": pane_id,
    }
    data.update(changes)
    return data


def make_session(
    generation: int,
    saved_at: float = START,
    panes: list[dict[str, Any]] | None = None,
    windows: list[dict[str, Any]] | None = None,
) -> Session:
    panes = [pane()] if panes is None else panes
    if windows is None:
        windows = [window(p["id"]) for p in panes]
    return Session.model_validate(
        {
            "version": 1,
            "generation": generation,
            "saved_at": saved_at,
            "windows": windows,
            "panes": panes,
        }
    )


def titled(generation: int, saved_at: float = START, title: str = "") -> Session:
    """A session that differs from every other title's in what it restores."""
    return make_session(generation, saved_at, [pane(title=title or f"t{generation}")])


def archive(history: SnapshotHistory, session: Session, **contents: Path) -> bool:
    return history.archive(session, session_bytes(session), contents)


def kept(history: SnapshotHistory) -> list[int]:
    return [entry.generation for entry in history.entries()]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def history(tmp_path: Path, clock: Clock) -> SnapshotHistory:
    return SnapshotHistory(tmp_path / "history", Limits(), clock, home="/home/u")


# -- what is archived ----------------------------------------------------------------

SPLIT_LAYOUT = [
    {"id": 1, "kind": "split", "direction": "vertical", "children": [2, 3], "ratios": [0.5, 0.5]},
    {"id": 2, "kind": "pane", "pane": 1},
    {"id": 3, "kind": "pane", "pane": 2},
]


def _two_panes(**changes: Any) -> Session:
    panes = [pane(1), pane(2, kind="explicit", argv=["vim", "notes.txt"], title="vim")]
    layout = {"nodes": SPLIT_LAYOUT, "root": 1, "focused_pane": 1}
    windows = [window(1, **layout)]
    data = make_session(7, START, panes, windows).model_dump(mode="json")
    for where, value in changes.items():
        target: Any = data
        *path, last = where.split(".")
        for part in path:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if last.isdigit() else last] = value
    return Session.model_validate(data)


@pytest.mark.parametrize(
    ("change", "value", "differs"),
    [
        ("saved_at", START + 500, False),
        ("generation", 8, False),
        ("panes.0.cwd.captured_at", START + 9, False),
        ("panes.0.cwd.source", "launch", False),
        ("panes.0.pid", 4242, False),
        ("panes.0.start_ticks", 99, False),
        ("windows.0.focused_pane", 2, False),
        (
            "windows.0",
            window(
                1,
                nodes=[
                    {**SPLIT_LAYOUT[0], "id": 10, "children": [20, 30]},
                    {**SPLIT_LAYOUT[1], "id": 20},
                    {**SPLIT_LAYOUT[2], "id": 30},
                ],
                root=10,
                focused_pane=1,
            ),
            False,
        ),
        ("panes.0.title", "make", True),
        ("panes.0.cwd.path", "/tmp", True),
        ("panes.1.argv", ["vim", "todo.txt"], True),
        ("panes.1.program", "/usr/local/bin/vim", True),
        ("panes.0.env_overrides", {"LANG": "C"}, True),
        ("panes.0.rows", 40, True),
        ("panes.0.invocation", "other", True),
        ("panes.0.checkpoint", {"invocation": "i1", "generation": 3}, True),
        ("panes.0.replay", "make", True),
        ("windows.0.title", "work", True),
        ("windows.0.geometry", {"x": 1, "y": 2, "width": 800, "height": 600}, True),
        ("windows.0.nodes.0.ratios", [0.25, 0.75], True),
        ("windows.0.nodes.0.direction", "horizontal", True),
    ],
)
def test_what_a_restore_would_bring_back_decides(change: str, value: Any, differs: bool) -> None:
    before, after = _two_panes(), _two_panes(**{change: value})
    assert (restorable_view(before) != restorable_view(after)) is differs


def test_only_a_change_in_what_would_restore_is_archived(
    history: SnapshotHistory, tmp_path: Path
) -> None:
    output = tmp_path / "contents"
    output.mkdir()
    (output / "i1.1").write_bytes(b"old output")
    (output / "i1.2").write_bytes(b"new output")
    assert archive(history, make_session(1), **{"i1.1": output / "i1.1"})
    # New output, a later time, another generation: the same restore.
    assert not archive(history, make_session(2, START + 60), **{"i1.2": output / "i1.2"})
    assert archive(history, make_session(3, START + 120, [pane(title="make")]))
    assert archive(
        history, make_session(4, START + 180, [pane(cwd={**pane()["cwd"], "path": "/"})])
    )
    assert kept(history) == [4, 3, 1]
    assert history.contents_of(1) == {"i1.1": history.directory / "1" / "contents" / "i1.1"}
    # A new SnapshotHistory (a new muxd) compares with what is on disk.
    again = SnapshotHistory(history.directory, Limits(), Clock(START + 200))
    assert not archive(
        again, make_session(5, START + 200, [pane(cwd={**pane()["cwd"], "path": "/"})])
    )


def test_an_entry_is_the_snapshot_as_written(history: SnapshotHistory) -> None:
    session = make_session(3)
    raw = session_bytes(session) + b" "  # exactly these bytes, not a new rendering
    assert history.archive(session, raw, {})
    assert (history.directory / "3" / "session.json").read_bytes() == raw
    assert sorted(os.listdir(history.directory / "3")) == ["session.json"]
    assert history.read(3) == session
    [entry] = history.entries()
    assert (entry.generation, entry.time, entry.panes, entry.windows) == (3, START, 1, 1)
    assert (entry.hosts, entry.bytes, entry.damaged) == ((), len(raw), "")
    assert entry.summary == "1 window: bash ~/src"


def test_the_summary_is_one_line_for_a_person() -> None:
    panes = [
        pane(1, kind="explicit", argv=["/usr/bin/vim", "notes.txt"]),
        pane(2, replay="make"),
        pane(3, cwd={**pane()["cwd"], "path": "/home/u/src"}),
        pane(4, kind="explicit", argv=["printf", "\x1b]52;c;evil\x07"]),
    ]
    text = summary(make_session(1, START, panes), "/home/u")
    assert text == "4 windows: vim notes.txt, make, bash ~/src, printf \\x1b]52;c;evil\\x07"
    assert summary(make_session(1, START, []), "/home/u") == "no panes"
    many = summary(make_session(1, START, [pane(i, replay="x" * 30) for i in range(1, 20)]), None)
    assert len(many) <= 120 and many.endswith(" more")


def test_snapshot_record_has_the_keys_and_types_of_list_snapshots(
    history: SnapshotHistory,
) -> None:
    archive(history, make_session(9, START + 0.75))
    record = snapshot_record(history.entries()[0])
    signatures = {key: variant.signature for key, variant in record.items()}
    assert signatures == {
        "generation": "t",
        "time": "x",
        "panes": "u",
        "windows": "u",
        "hosts": "as",
        "bytes": "t",
        "summary": "s",
    }
    assert (record["generation"].value, record["time"].value, record["hosts"].value) == (
        9,
        int(START),
        [],
    )


def test_the_constructor_does_no_io(tmp_path: Path) -> None:
    SnapshotHistory(tmp_path / "history", Limits())
    assert not (tmp_path / "history").exists()
    with pytest.raises(ValueError, match="absolute"):
        SnapshotHistory(Path("history"), Limits())


# -- contents files ------------------------------------------------------------------


def test_contents_are_hard_linked_and_outlive_the_original(
    history: SnapshotHistory, tmp_path: Path
) -> None:
    original = tmp_path / "i1.4"
    original.write_bytes(b"\x00encrypted" * 100)
    assert archive(history, make_session(1), **{"i1.4": original})
    assert archive(history, titled(2), **{"i1.4": original})
    first, second = history.contents_of(1)["i1.4"], history.contents_of(2)["i1.4"]
    assert os.stat(first).st_ino == os.stat(second).st_ino == os.stat(original).st_ino
    original.unlink()  # the contents writer replaced or forgot it
    assert first.read_bytes() == b"\x00encrypted" * 100


def test_a_copy_where_a_link_cannot_be(
    history: SnapshotHistory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = tmp_path / "i1.1"
    original.write_bytes(b"bytes")

    def no_link(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EXDEV, "cross-device link")

    monkeypatch.setattr(os, "link", no_link)
    assert archive(history, make_session(1), **{"i1.1": original})
    copy = history.contents_of(1)["i1.1"]
    assert copy.read_bytes() == b"bytes" and copy.stat().st_ino != original.stat().st_ino
    assert copy.stat().st_mode & 0o777 == 0o600


def test_a_contents_file_gone_is_left_out(
    history: SnapshotHistory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert archive(history, make_session(1), **{"i1.1": tmp_path / "gone"})
    assert history.contents_of(1) == {}
    assert "contents file gone is gone" in caplog.text


def test_a_contents_name_must_be_a_plain_name(history: SnapshotHistory, tmp_path: Path) -> None:
    for name in ("../escape", ".hidden", "a/b", ""):
        with pytest.raises(ValueError, match="not a contents file name"):
            history.archive(make_session(1), b"{}", {name: tmp_path / "x"})
    assert not history.directory.exists()


# -- thinning ------------------------------------------------------------------------


def expected_after(archived: list[tuple[int, float]], now: float, limits: Limits) -> list[int]:
    """The policy stated plainly, over every snapshot ever archived (in generation and
    time order): all of the last hour, the newest of each UTC hour for two days, the
    newest of each UTC day for two weeks, and the newest of all whatever its age."""
    kept = []
    for index, (generation, time) in enumerate(archived):
        age = now - time
        following = archived[index + 1][1] if index + 1 < len(archived) else None
        last_of_hour = following is None or following // HOUR != time // HOUR
        last_of_day = following is None or following // DAY != time // DAY
        if (
            age < limits.history_keep_all_seconds
            or (age < limits.history_hourly_seconds and last_of_hour)
            or (age < limits.history_daily_seconds and last_of_day)
            or following is None
        ):
            kept.append(generation)
    return sorted(kept, reverse=True)


def test_two_weeks_of_snapshots_every_ten_minutes_are_thinned_by_the_policy() -> None:
    limits = Limits()
    entries: list[ThinningEntry] = []
    archived: list[tuple[int, float]] = []
    for generation in range(1, 16 * 144 + 1):
        now = START + generation * 600
        entries.append(ThinningEntry(generation, now, True))
        archived.append((generation, now))
        gone = to_remove(entries, limits, now)
        entries = [e for e in entries if e.generation not in gone]
        assert sorted((e.generation for e in entries), reverse=True) == expected_after(
            archived, now, limits
        ), f"after {generation}"
    # One an hour for 47 hours, one a day for 12 days, every one of the last hour.
    assert 60 <= len(entries) <= 70


def test_two_weeks_on_disk(tmp_path: Path) -> None:
    """Archives at uneven times (every 47 minutes, an hour's boundary falling anywhere)."""
    limits = Limits()
    clock = Clock()
    history = SnapshotHistory(tmp_path / "history", limits, clock)
    archived: list[tuple[int, float]] = []
    for generation in range(1, 16 * 24 * 60 // 47):
        clock.now = START + generation * 47 * 60
        assert archive(history, titled(generation, clock.now))
        archived.append((generation, clock.now))
        if generation % 50 == 0:
            assert kept(history) == expected_after(archived, clock.now, limits)
    assert kept(history) == expected_after(archived, clock.now, limits)
    clock.now += 30 * DAY  # nothing archived for a month: the newest one stays
    history.thin()
    assert kept(history) == [archived[-1][0]]


def test_the_caps_remove_the_oldest_first(tmp_path: Path, clock: Clock) -> None:
    limits = Limits(history_max_snapshots=5)
    history = SnapshotHistory(tmp_path / "history", limits, clock)
    for generation in range(1, 9):
        archive(history, titled(generation, clock.now))
    assert kept(history) == [8, 7, 6, 5, 4]


def test_the_byte_cap_counts_a_linked_file_once() -> None:
    shared = {(1, 100): 1000}
    entries = [
        ThinningEntry(1, START, True, {(1, 1): 10, **shared}),
        ThinningEntry(2, START, True, {(1, 2): 10, **shared}),
        ThinningEntry(3, START, True, {(1, 3): 10, **shared}),
        ThinningEntry(4, START, True, {(1, 4): 10, (1, 200): 1000}),
    ]
    assert history_bytes(entries) == 2040
    # 2040 bytes: removing 1 and 2 frees only 20 (the shared file stays with 3).
    assert to_remove(entries, Limits(history_max_bytes=2020), START) == {
        1: "past history_max_bytes",
        2: "past history_max_bytes",
    }
    assert set(to_remove(entries, Limits(history_max_bytes=1010), START)) == {1, 2, 3}
    # Never below the newest: a cap smaller than it still keeps it.
    assert set(to_remove(entries, Limits(history_max_bytes=0), START)) == {1, 2, 3}


def test_the_byte_cap_on_disk(tmp_path: Path, clock: Clock) -> None:
    contents = tmp_path / "contents"
    contents.mkdir()
    history = SnapshotHistory(tmp_path / "history", Limits(history_max_bytes=100_000), clock)
    (contents / "shared").write_bytes(bytes(30_000))  # kept by every entry: counted once
    for generation in range(1, 6):
        (contents / f"i1.{generation}").write_bytes(bytes(20_000))
        files = {"shared": contents / "shared", "own": contents / f"i1.{generation}"}
        archive(history, titled(generation), **files)
    # 30,000 + 3 x 20,000 + 3 snapshots of some 500 bytes: within 100,000; a fourth is not.
    assert kept(history) == [5, 4, 3]
    assert all(entry.bytes > 50_000 for entry in history.entries())


def test_empty_snapshots_never_push_out_the_last_with_panes() -> None:
    limits = Limits(history_max_snapshots=3)
    with_panes = ThinningEntry(1, START, True)
    empties = [ThinningEntry(g, START + g * DAY, False) for g in range(2, 60)]
    now = START + 60 * DAY
    gone = to_remove([with_panes, *empties], limits, now)
    assert 1 not in gone and 59 not in gone
    assert {1, 2, 3, *range(4, 60)} - set(gone) == {1, 58, 59}  # the cap: 3 in all


def test_an_empty_snapshot_is_archived_beside_the_last_with_panes(
    tmp_path: Path, clock: Clock
) -> None:
    history = SnapshotHistory(tmp_path / "history", Limits(history_max_snapshots=1), clock)
    assert archive(history, make_session(1, clock.now))
    clock.now += HOUR
    assert archive(history, make_session(2, clock.now, panes=[]))
    clock.now += 60 * DAY
    assert not archive(history, make_session(3, clock.now, panes=[]))  # the same restore
    history.thin()
    assert kept(history) == [2, 1]
    [empty, full] = history.entries()
    assert (empty.panes, empty.summary, full.panes) == (0, "no panes", 1)


# -- what a crash, a full disk or a careless hand leaves -----------------------------


class Crash(BaseException):
    """muxd killed mid-archive: nothing after this point runs."""


def test_an_archive_cut_short_is_not_listed_and_is_removed(tmp_path: Path, clock: Clock) -> None:
    def crash(fd: int) -> None:
        raise Crash

    directory = tmp_path / "history"
    archive(SnapshotHistory(directory, Limits(), clock), make_session(1))
    dying = SnapshotHistory(directory, Limits(), clock, ops=FileOps(fsync=crash))
    with pytest.raises(Crash):
        archive(dying, titled(2))
    (directory / ".removing-7").mkdir()  # a removal cut short, too
    (directory / ".removing-7" / "session.json").write_bytes(b"{")
    assert (directory / ".incoming").is_dir()

    restarted = SnapshotHistory(directory, Limits(), clock)
    assert kept(restarted) == [1]
    assert sorted(os.listdir(directory)) == ["1"]


def test_a_failed_archive_leaves_nothing(tmp_path: Path, clock: Clock) -> None:
    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    history = SnapshotHistory(tmp_path / "history", Limits(), clock, ops=FileOps(write=full))
    with pytest.raises(Exception, match="writing its snapshot failed \\(no space left on device"):
        archive(history, make_session(1))
    assert os.listdir(tmp_path / "history") == []


def test_a_damaged_entry_is_listed_as_such_and_not_read(
    history: SnapshotHistory, caplog: pytest.LogCaptureFixture
) -> None:
    archive(history, make_session(1))
    archive(history, titled(2))
    (history.directory / "2" / "session.json").write_bytes(b'{"version": 1, "generat')
    with caplog.at_level(logging.WARNING):
        entries = history.entries()
    assert [(e.generation, bool(e.damaged)) for e in entries] == [(2, True), (1, False)]
    assert entries[0].summary.startswith("damaged: it is not valid JSON")
    assert "snapshot 2 in the history is damaged" in caplog.text
    with pytest.raises(Unavailable, match="snapshot 2 in the history is damaged") as refused:
        history.read(2)
    assert str(history.directory) not in refused.value.message
    # The damaged newest entry restores nothing: the next snapshot is archived.
    assert archive(SnapshotHistory(history.directory, Limits()), titled(3, title="t2"))


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        ("missing", "its snapshot file is missing"),
        ("symlink", "its snapshot file is a symbolic link"),
        ("fifo", "not a regular file"),
        ("other generation", "its snapshot is generation 5"),
        ("not a session", "panes: Field required"),
    ],
)
def test_every_damage_is_named(history: SnapshotHistory, damage: str, problem: str) -> None:
    archive(history, make_session(1))
    file = history.directory / "1" / "session.json"
    file.unlink()
    if damage == "symlink":
        file.symlink_to("/dev/zero")
    elif damage == "fifo":
        os.mkfifo(file)
    elif damage == "other generation":
        file.write_bytes(session_bytes(make_session(5)))
    elif damage == "not a session":
        file.write_bytes(b'{"version": 1, "generation": 1, "saved_at": 0, "windows": []}')
    with pytest.raises(Unavailable, match=problem):
        history.read(1)
    assert problem in history.entries()[0].damaged


def test_unknown_generations_are_refused_by_name(history: SnapshotHistory) -> None:
    archive(history, make_session(1))
    with pytest.raises(InvalidArgument, match=r"^there is no snapshot 42 in the history$"):
        history.read(42)
    with pytest.raises(InvalidArgument, match="there is no snapshot 42"):
        history.contents_of(42)
    with pytest.raises(InvalidArgument, match="a number"):
        history.read(True)


def test_names_not_of_mux_are_ignored(history: SnapshotHistory, tmp_path: Path) -> None:
    archive(history, make_session(1))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "session.json").write_bytes(session_bytes(make_session(8)))
    directory = history.directory
    (directory / "7").write_bytes(b"a file")
    (directory / "8").symlink_to(elsewhere)
    (directory / "9").symlink_to("/nonexistent")
    for name in ("notes", "007", "-3", "1e3", "99999999999999999999", ".hidden"):
        (directory / name).mkdir()
    assert kept(history) == [1]
    for hostile in (8, -3, 7):
        with pytest.raises(InvalidArgument, match=f"there is no snapshot {hostile} in"):
            history.read(hostile)
    assert archive(history, titled(2))
    history.remove_unfinished()
    assert sorted(os.listdir(directory)) == sorted(
        ["1", "2", "7", "8", "9", "notes", "007", "-3", "1e3", "99999999999999999999", ".hidden"]
    )
    assert (elsewhere / "session.json").exists()


def test_a_generation_used_again_replaces_its_entry(history: SnapshotHistory) -> None:
    archive(history, make_session(3))
    archive(history, titled(4))
    assert archive(history, titled(3, title="again"))  # session.json was removed by hand
    assert history.read(3).panes[0].title == "again"
    assert history.newest_generation() == 4
