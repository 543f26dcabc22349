"""application-resurrection/1 messages: both sides, the bounds, and garbage."""

from __future__ import annotations

import contextlib
import itertools
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


def test_a_long_line_after_a_short_one_in_the_same_data_is_refused() -> None:
    decoder = ar.LineDecoder()
    with pytest.raises(ar.Violation) as violation:
        decoder.receive_data(b"a\n" + b"x" * ar.MAX_LINE + b"\n")
    assert violation.value.code is ar.ErrorCode.INVALID_HANDSHAKE
    assert decoder.pending == 0


def test_a_long_unterminated_tail_after_a_line_is_refused() -> None:
    decoder = ar.LineDecoder()
    with pytest.raises(ar.Violation):
        decoder.receive_data(b"a\nb\n" + b"x" * ar.MAX_LINE)
    assert decoder.pending == 0


def test_a_tail_that_grows_over_the_limit_is_refused_when_it_does() -> None:
    decoder = ar.LineDecoder()
    decoder.receive_data(b"a\n" + b"x" * (ar.MAX_LINE - 2))
    decoder.receive_data(b"x")  # MAX_LINE - 1 bytes: its newline still fits
    with pytest.raises(ar.Violation):
        decoder.receive_data(b"x")
    assert decoder.pending == 0


def test_a_line_of_exactly_the_limit_is_taken() -> None:
    decoder = ar.LineDecoder()
    longest = b"x" * (ar.MAX_LINE - 1)  # with its newline: MAX_LINE bytes
    decoder.receive_data(b"a\n" + longest + b"\n" + longest)
    decoder.receive_data(b"\n")
    assert [decoder.next_line(), decoder.next_line(), decoder.next_line()] == [
        b"a",
        longest,
        longest,
    ]
    assert decoder.next_line() is None


def _lines_and_cuts(limit: int) -> st.SearchStrategy[tuple[list[int], int | None, list[int]]]:
    """Line lengths (without the newline) around `limit`, an optional unterminated tail,
    and where the stream is cut into chunks."""
    lengths = st.lists(st.integers(0, limit + 2), max_size=8)
    tail = st.none() | st.integers(0, limit + 2)
    cuts = st.lists(st.integers(0, 8 * (limit + 3)), max_size=10)
    return st.tuples(lengths, tail, cuts)


@pytest.mark.parametrize("limit", [8, ar.MAX_LINE])
@given(data=st.data())
def test_every_line_is_bounded_however_the_data_is_cut(limit: int, data: st.DataObject) -> None:
    """A Violation comes with exactly the chunk that makes some line (terminated or not)
    longer than the limit; until then every line comes out whole and in order, and the
    decoder never holds a line over the limit."""
    lengths, tail, cuts = data.draw(_lines_and_cuts(limit))
    lines = [bytes([ord("a") + i % 26]) * length for i, length in enumerate(lengths)]
    stream = b"".join(line + b"\n" for line in lines) + (b"t" * tail if tail is not None else b"")
    # Offset of the first byte that makes a line `limit` bytes long without its newline.
    offending: int | None = None
    start = 0
    for length in [*lengths, *([] if tail is None else [tail])]:
        if length >= limit:
            offending = start + limit - 1
            break
        start += length + 1
    bounds = sorted({0, len(stream), *(cut for cut in cuts if cut < len(stream))})
    decoder = ar.LineDecoder(limit)
    taken: list[bytes] = []
    for begin, end in itertools.pairwise(bounds):
        if offending is not None and begin <= offending < end:
            with pytest.raises(ar.Violation):
                decoder.receive_data(stream[begin:end])
            assert decoder.pending == 0
            break
        decoder.receive_data(stream[begin:end])
        assert decoder.pending <= end  # nothing beyond what was given
        while (line := decoder.next_line()) is not None:
            taken.append(line)
        assert decoder.pending < limit  # the unterminated tail
    else:
        assert offending is None
        assert taken == lines
        return
    assert taken == lines[: len(taken)]
