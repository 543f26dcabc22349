"""The OSC scanner: what it reports, for any split of the stream, and that nothing breaks it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mux.protocol.osc import (
    MAX_OSC_BYTES,
    CwdReport,
    OscEvent,
    OscScanner,
    ShellMarker,
    TitleChange,
)

HOSTS = frozenset({"myhost"})


def scan(*chunks: bytes) -> list[OscEvent]:
    scanner = OscScanner(HOSTS)
    events: list[OscEvent] = []
    for chunk in chunks:
        events += scanner.feed(chunk)
    return events


def test_cwd_from_osc_7_for_local_hosts_only() -> None:
    assert scan(b"\x1b]7;file:///home/a%20b/x\x07") == [CwdReport("/home/a b/x")]
    assert scan(b"\x1b]7;file://localhost/tmp\x1b\\") == [CwdReport("/tmp")]
    assert scan(b"\x1b]7;file://MyHost/srv\x07") == [CwdReport("/srv")]
    assert scan(b"\x1b]7;file://elsewhere/srv\x07") == []
    assert scan(b"\x1b]7;http://myhost/srv\x07") == []
    assert scan(b"\x1b]7;file://myhost\x07") == []  # no path
    assert scan(b"\x1b]7;file:///a%00b\x07") == []  # a NUL is no path


def test_cwd_from_osc_9_9() -> None:
    assert scan(b'\x1b]9;9;"/var/log"\x07') == [CwdReport("/var/log")]
    assert scan(b"\x1b]9;9;/var/log\x1b\\") == [CwdReport("/var/log")]
    assert scan(b"\x1b]9;4;1;50\x07") == []  # progress, not a directory
    assert scan(b"\x1b]9;9;relative\x07") == []


def test_titles() -> None:
    assert scan(b"\x1b]0;vim: notes.txt\x07", b"\x1b]2;b\xc3\xa4r\x1b\\") == [
        TitleChange("vim: notes.txt"),
        TitleChange("bär"),
    ]
    assert scan(b"\x1b]1;icon only\x07") == []
    assert scan(b"\x1b]2;a\x01b\x07") == [TitleChange("ab")]


def test_shell_markers() -> None:
    stream = (
        b"\x1b]133;A;mux_token=t0k\x07$ \x1b]133;B;mux_token=t0k\x07"
        b"\x1b]133;C;mux_token=t0k;cmdline_url=vim%20a%3Bb.txt\x07"
        b"output\x1b]133;D;130;mux_token=t0k\x07\x1b]133;A\x07\x1b]133;Z\x07"
    )
    assert scan(stream) == [
        ShellMarker("A", "t0k"),
        ShellMarker("B", "t0k"),
        ShellMarker("C", "t0k", command="vim a;b.txt"),
        ShellMarker("D", "t0k", status=130),
        ShellMarker("A", None),
    ]


def test_an_escape_that_is_not_st_abandons_the_sequence() -> None:
    # A new sequence starting inside an unterminated one wins, as in a terminal.
    assert scan(b"\x1b]2;lost\x1b]2;kept\x07") == [TitleChange("kept")]
    assert scan(b"\x1b]2;lost\x1b[31m red \x1b]2;kept\x07") == [TitleChange("kept")]


def test_an_overlong_sequence_is_skipped_without_being_kept() -> None:
    scanner = OscScanner(HOSTS)
    assert scanner.feed(b"\x1b]2;" + b"x" * (MAX_OSC_BYTES + 10)) == []
    for _ in range(100):
        assert scanner.feed(b"y" * 65536) == []
    assert len(scanner._body) == 0
    assert scanner.feed(b"\x07\x1b]2;after\x07") == [TitleChange("after")]


VALID = [
    b"\x1b]7;file:///srv/x\x07",
    b"\x1b]0;title one\x1b\\",
    b"\x1b]133;C;mux_token=a;cmdline_url=ls%20-l\x07",
    b"\x1b]133;D;0;mux_token=a\x1b\\",
    b"plain text \xc3\xa4 and \x1b[1;31mcolour\x1b[0m\r\n",
    b"\x1b]9;9;/tmp\x07",
    b"\x1b",
    b"\x07",
]


@given(st.lists(st.sampled_from(VALID), max_size=20), st.lists(st.integers(0, 2000), max_size=10))
def test_any_split_gives_the_same_events(pieces: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(pieces)
    whole = scan(stream)
    points = sorted({c % (len(stream) + 1) for c in cuts})
    chunks = [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]
    assert scan(*chunks) == whole
    assert scan(*[bytes([b]) for b in stream]) == whole


@given(st.lists(st.binary(max_size=300), max_size=20))
def test_random_bytes_never_raise_and_memory_stays_bounded(chunks: list[bytes]) -> None:
    scanner = OscScanner(HOSTS)
    for chunk in chunks:
        scanner.feed(chunk)
        assert len(scanner._body) <= MAX_OSC_BYTES


@given(st.binary(max_size=60), st.lists(st.sampled_from([b"%", b"%2", b"%20", b"%zz", b"%e2"])))
def test_percent_decoding_agrees_with_urllib(data: bytes, escapes: list[bytes]) -> None:
    import urllib.parse

    from mux.protocol.osc import _percent_decode

    text = data + b"".join(escapes) + data
    assert _percent_decode(text) == urllib.parse.unquote_to_bytes(text)
