"""application-resurrection/1 messages: both sides, the bounds, and garbage."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mux.protocol import resurrection as ar


def test_a_handshake_both_ways() -> None:
    assert ar.parse_hello(ar.hello("notes").rstrip(b"\n")) == "notes"
    assert ar.parse_offer(ar.restore_offer(None).rstrip(b"\n")) is None
    assert ar.parse_offer(ar.restore_offer("ref:1").rstrip(b"\n")) == "ref:1"
    assert json.loads(ar.restore_offer("x")) == {
        "protocol": "application-resurrection/1",
        "restore": {"reference": "x"},
    }
    with pytest.raises(ar.Refused) as refused:
        ar.parse_offer(ar.rejection(ar.ErrorCode.OWNERSHIP_REJECTED).rstrip(b"\n"))
    assert refused.value.code == "ownership_rejected"


def test_requests_and_answers() -> None:
    assert ar.parse_request(ar.checkpoint_request("state 7").rstrip(b"\n")) == ar.Checkpoint(
        "state 7"
    )
    assert ar.parse_request(ar.clear_request().rstrip(b"\n")) == ar.Clear()
    assert ar.parse_acknowledgement(ar.checkpointed(3).rstrip(b"\n"), "checkpointed") == 3
    assert ar.parse_acknowledgement(ar.cleared().rstrip(b"\n"), "cleared") is None
    with pytest.raises(ar.Refused) as refused:
        ar.parse_acknowledgement(ar.checkpoint_failed().rstrip(b"\n"), "checkpointed")
    assert refused.value.code == "checkpoint_failed"


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"not json",
        b"[1, 2]",
        b'{"protocol": "application-resurrection/2", "hello": {"application": "a"}}',
        b'{"protocol": "application-resurrection/1", "hello": {}}',
        b'{"protocol": "application-resurrection/1", "hello": {"application": ""}}',
        b'{"protocol": "application-resurrection/1", "hello": {"application": 7}}',
        b'{"protocol": "application-resurrection/1", "hello": {"application": "a"}, "x": 1}',
        b"\xff\xfe",
    ],
)
def test_bad_hellos_are_invalid_handshakes(line: bytes) -> None:
    with pytest.raises(ar.Violation) as violation:
        ar.parse_hello(line)
    assert violation.value.code is ar.ErrorCode.INVALID_HANDSHAKE


@pytest.mark.parametrize(
    "line",
    [
        b'{"checkpoint": {}}',
        b'{"checkpoint": {"reference": 1}}',
        b'{"checkpoint": {"reference": "a"}, "clear": {}}',
        b'{"clear": {"x": 1}}',
        b'{"exec": {"command": "rm -rf /"}}',
        b'{"checkpoint": {"reference": "' + b"r" * 4097 + b'"}}',
    ],
)
def test_bad_requests(line: bytes) -> None:
    with pytest.raises(ar.Violation):
        ar.parse_request(line)


def test_unknown_answers_make_clients_fail_closed() -> None:
    for line in (b'{"protocol": "application-resurrection/1", "restore": 5}', b"{}", b"junk"):
        with pytest.raises(ar.Refused):
            ar.parse_offer(line)
    with pytest.raises(ar.Refused) as refused:
        ar.parse_offer(b'{"protocol": "application-resurrection/1", "error": {"code": "new"}}')
    assert refused.value.code == "new"


def test_lines_are_bounded_without_being_buffered() -> None:
    decoder = ar.LineDecoder()
    decoder.receive_data(b"x" * (ar.MAX_LINE - 1))
    with pytest.raises(ar.Violation):
        decoder.receive_data(b"y")
    assert decoder.pending == 0
    decoder = ar.LineDecoder()
    with pytest.raises(ar.Violation):
        decoder.receive_data(b"z" * ar.MAX_LINE + b"\n")
    decoder = ar.LineDecoder()
    decoder.receive_data(b"a\nb")
    assert decoder.next_line() == b"a"
    assert decoder.next_line() is None
    decoder.receive_data(b"c\n")
    assert decoder.next_line() == b"bc"


@given(st.lists(st.binary(max_size=200), max_size=20))
def test_garbage_never_escapes_as_anything_but_a_violation(chunks: list[bytes]) -> None:
    decoder = ar.LineDecoder()
    for chunk in chunks:
        try:
            decoder.receive_data(chunk)
        except ar.Violation:
            continue
        while (line := decoder.next_line()) is not None:
            for parse in (ar.parse_hello, ar.parse_request):
                with contextlib.suppress(ar.Violation):
                    parse(line)
            with contextlib.suppress(ar.Refused):
                ar.parse_offer(line)
