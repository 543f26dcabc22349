"""The one reader of JSON files on disk (mux.system.json_file): every hostile shape is one
MalformedJson naming the kind of file and what is wrong, never another exception."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mux.config import Settings
from mux.federation.host_book import HostBook
from mux.resurrection.checkpoints import CheckpointQuarantined, CheckpointStore
from mux.state.schema import SnapshotError
from mux.state.session_file import SnapshotRefused, parse_session, read_session
from mux.system.json_file import (
    INT_MAX,
    INT_MIN,
    JsonFileKind,
    MalformedJson,
    nesting,
    parse_json_object,
    read_json_object,
)

KIND = JsonFileKind("the test file", 1 << 20, max_depth=8)

HOSTILE = [
    (b'{"x": ' + b"[" * 200_000 + b"]" * 200_000 + b"}", "nested deeper than 8 levels"),
    (b"[" * 200_000, "nested deeper than 8 levels"),  # and truncated
    (b'{"generation": ' + b"1" * 5000 + b"}", "number out of range (111111111111…, 5000"),
    (b'{"x": -' + b"9" * 5000 + b"}", "number out of range"),
    (b'{"x": ' + str(INT_MAX + 1).encode() + b"}", "number out of range"),
    (b'{"x": ' + str(INT_MIN - 1).encode() + b"}", "number out of range"),
    (b'{"x": 1e999}', "number out of range (1e999)"),
    (b'{"x": NaN}', "number out of range (NaN)"),
    (b'{"x": -Infinity}', "number out of range (-Infinity)"),
    (b"[]", "not a JSON object (it is an array)"),
    (b'"x"', "not a JSON object (it is a string)"),
    (b"null", "not a JSON object (it is null)"),
    (b"true", "not a JSON object (it is true or false)"),
    (b"12", "not a JSON object (it is a number)"),
    (b'{"x": "a' + b"b" * (1 << 20) + b'"}', "larger than 1048576 bytes"),
    (b'{"x": "\xff\xfe"}', "not UTF-8 text (byte 7)"),
    (b"\xef\xbb\xbf{}", "not valid JSON"),  # a byte order mark is not JSON
    (b'{"x": "\\ud800"}', "not Unicode (a lone surrogate)"),
    (b'{"\\udc00": 1}', "not Unicode (a lone surrogate)"),
    (b'{"x": ["ok", {"y": "\\uDBFF"}]}', "not Unicode (a lone surrogate)"),
    (b'{"version": 1, "generation": 3, "pa', "not valid JSON"),
    (b"", "not valid JSON"),
]


@pytest.mark.parametrize(("data", "problem"), HOSTILE, ids=[p for _, p in HOSTILE])
def test_every_hostile_shape_is_refused_naming_what_is_wrong(data: bytes, problem: str) -> None:
    with pytest.raises(MalformedJson) as refused:
        parse_json_object(data, KIND)
    assert problem in refused.value.problem
    assert str(refused.value).startswith("the test file: it ")
    assert refused.value.kind is KIND


@pytest.mark.parametrize(("data", "problem"), HOSTILE, ids=[p for _, p in HOSTILE])
def test_the_same_from_a_file(tmp_path: Path, data: bytes, problem: str) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(data)
    with pytest.raises(MalformedJson, match=problem.replace("(", r"\(")[:20]):
        read_json_object(path, KIND)
    assert path.read_bytes() == data, "reading never changes the file"


def test_what_is_within_the_bounds_is_read_as_json_reads_it() -> None:
    value = {
        "int64": INT_MIN,
        "uint64": INT_MAX,
        "float": -1.5e300,
        "text": "é\U0001f600\u202e[{",  # brackets in a string are not nesting
        "escaped": '\\ud83d\\ude00 \\" [[[[[[[[[[',
        "nested": [[[[[[{}]]]]]],  # 8 levels with the top
    }
    for data in (json.dumps(value).encode(), json.dumps(value, ensure_ascii=False).encode()):
        assert parse_json_object(data, KIND) == value
    assert parse_json_object(b'{"pair": "\\ud83d\\ude00"}', KIND) == {"pair": "\U0001f600"}
    exactly = b'{"x": "' + b"a" * ((1 << 20) - 9) + b'"}'
    assert len(exactly) == 1 << 20
    assert parse_json_object(exactly, KIND) == {"x": "a" * ((1 << 20) - 9)}


def test_absent_unreadable_and_special_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_json_object(tmp_path / "absent.json", KIND)
    with pytest.raises(IsADirectoryError):
        read_json_object(tmp_path, KIND)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # no writer: a reader that opened it plainly would wait forever
    with pytest.raises(MalformedJson, match="not a regular file"):
        read_json_object(fifo, KIND)
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(tmp_path / "s.json"))
        with pytest.raises(OSError):  # (ENXIO: a socket cannot be opened at all)
            read_json_object(tmp_path / "s.json", KIND)


def test_a_huge_file_costs_only_its_bound(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:
        f.truncate(1 << 40)  # 1 TiB, sparse
    with pytest.raises(MalformedJson, match="larger than 1048576 bytes"):
        read_json_object(path, KIND)


def test_the_nesting_scan_is_linear_even_for_strings_that_never_end() -> None:
    # Every quote starts a string that runs to the end: a scan that started over at
    # each would take hours for this (the suite's timeout would end it).
    assert nesting('"' + '\\"' * 2_000_000) == 0
    assert nesting("[" * 1_000_000) == 1_000_000


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=30,
)


@given(JSON_VALUES)
def test_nesting_agrees_with_the_parser(value: object) -> None:
    def depth(item: object) -> int:
        if isinstance(item, list):
            return 1 + max(map(depth, item), default=0)
        if isinstance(item, dict):
            return 1 + max(map(depth, item.values()), default=0)
        return 0

    assert nesting(json.dumps(value)) == depth(value)
    assert nesting(json.dumps(value, ensure_ascii=False)) == depth(value)


# -- each reader's outcome -------------------------------------------------------------------

SHAPES = {
    "deep": b'{"generation": 41, "x": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
    "digits": b'{"generation": 41, "x": ' + b"1" * 5000 + b"}",
    "array": b"[]",
    "null": b"null",
    "not UTF-8": b'{"generation": 41, "x": "\xff"}',
    "truncated": b'{"generation": 41, "x": [',
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_session_file_is_quarantined_with_the_generation_it_claims(
    tmp_path: Path, shape: str
) -> None:
    path = tmp_path / "session.json"
    path.write_bytes(SHAPES[shape])
    with pytest.raises(SnapshotRefused) as refused:
        read_session(path, tmp_path / "quarantine")
    assert refused.value.quarantined_as.read_bytes() == SHAPES[shape]
    assert refused.value.reason.startswith("it ")
    assert refused.value.generation == 0  # (none can be read from a file not read)


def test_a_refused_but_readable_snapshot_says_which_generation_it_claims(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    for claimed, known in ((41, 41), (2**63, 0), (-3, 0), (True, 0), ("41", 0)):
        path.write_text(json.dumps({**EMPTY_SESSION, "generation": claimed, "panes": "?"}))
        with pytest.raises(SnapshotRefused) as refused:
            read_session(path, tmp_path / "quarantine")
        assert refused.value.generation == known


EMPTY_SESSION = {"version": 1, "generation": 1, "saved_at": 0, "windows": [], "panes": []}


def test_a_snapshot_with_numbers_past_what_mux_shows_is_refused(tmp_path: Path) -> None:
    for field, value in (("generation", 2**63), ("saved_at", 1e300), ("saved_at", -1.0)):
        with pytest.raises(SnapshotError, match=field):
            parse_session(json.dumps({**EMPTY_SESSION, field: value}).encode())
    assert parse_session(json.dumps(EMPTY_SESSION).encode()).generation == 1
    for panes in (5, ["x", 3]):  # a version 0 of any shape migrates, to be refused
        with pytest.raises(SnapshotError, match="panes"):
            parse_session(json.dumps({**EMPTY_SESSION, "version": 0, "panes": panes}).encode())


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_checkpoint_is_quarantined_when_the_store_has_a_quarantine(
    tmp_path: Path, shape: str
) -> None:
    invocation = "ab" * 16
    store = CheckpointStore(tmp_path / "checkpoints", quarantine_dir=tmp_path / "quarantine")
    path = store.path_for(invocation)
    path.parent.mkdir()
    path.write_bytes(SHAPES[shape])
    with pytest.raises(CheckpointQuarantined, match="the checkpoint file is corrupt") as moved:
        store.read(invocation)
    assert not path.exists()
    assert (tmp_path / "quarantine" / moved.value.moved_as).read_bytes() == SHAPES[shape]
    assert store.write(invocation, "app", "ref") == 1  # and the next checkpoint is written


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_hosts_file_is_logged_and_left_alone(
    tmp_path: Path, shape: str, caplog: pytest.LogCaptureFixture
) -> None:
    file = tmp_path / "hosts.json"
    file.write_bytes(SHAPES[shape])
    book = HostBook(Settings(), file)
    book.load()
    assert book.hosts() == []
    assert "the added hosts could not be read (the hosts file: it " in caplog.text
    assert file.read_bytes() == SHAPES[shape]
