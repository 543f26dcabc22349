"""SPEC §12: a program in a pane cannot put a terminal control into what mux shows of it.
OSC 7 and 9;9 paths holding C0, DEL or C1, or that are no UTF-8, are refused by the
scanner (the working directory stays); titles, from OSC 0/2, from Spawn, restored or
handed over, lose C0, DEL and C1 and keep bidi controls (right-to-left text needs them;
muxctl escapes them)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mux.panes.cwd import CwdObservation
from mux.panes.shell_tracker import CWD_CHANGED, TITLE_CHANGED, ShellTracker
from mux.protocol.errors import InvalidArgument
from mux.protocol.osc import CwdReport, OscScanner, TitleChange
from mux.protocol.spawn_options import parse_spawn_options

C1_UTF8 = "\u009b".encode()  # CSI to many terminals
# C0, DEL, C1, and any surrogate (a byte that was no UTF-8).
TERMINAL_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def scan(data: bytes) -> list[object]:
    return list(OscScanner(frozenset()).feed(data))


@pytest.mark.parametrize(
    "encoded",
    [
        "%1b]52;c;SGVsbG8=%07",  # an OSC 52 clipboard write, as found
        "%1b[2J",
        "%07",
        "%0a",
        "%0d",
        "%09",
        "%7f",
        "%c2%9b",  # U+009B as UTF-8
        "%c2%80",
        "%9b",  # a lone C1 byte: no UTF-8, but a CSI to a terminal in 8-bit mode
        "%ff",  # no UTF-8: D-Bus could not carry it, and ListPanes failed for everyone
        "%c3",
    ],
)
def test_an_osc_7_path_with_a_control_is_refused(encoded: str) -> None:
    assert scan(f"\x1b]7;file:///tmp/d{encoded}x\x07".encode()) == []


@pytest.mark.parametrize("raw", [b"\x01", b"\r", b"\x7f", C1_UTF8, b"\x85", b"\n"], ids=repr)
def test_an_osc_9_9_path_with_a_control_is_refused(raw: bytes) -> None:
    assert scan(b"\x1b]9;9;/tmp/d" + raw + b"x\x07") == []


def test_paths_without_controls_still_count() -> None:
    # Bidi controls and other non-ASCII characters are no terminal controls: the path is
    # kept as the directory is named.
    assert scan(b"\x1b]7;file:///tmp/%e2%80%aeabc\x07") == [CwdReport("/tmp/\u202eabc")]
    assert scan(b"\x1b]7;file:///tmp/caf%c3%a9\x07") == [CwdReport("/tmp/caf\u00e9")]
    assert scan("\x1b]9;9;/tmp/\u05d0\u202e\x07".encode()) == [CwdReport("/tmp/\u05d0\u202e")]


def test_titles_lose_c0_del_and_c1_but_keep_bidi_controls() -> None:
    title = "a\x01b\x7fc" + "\u009b\u0085" + "d\u202ee\u2067f"
    assert scan(b"\x1b]2;" + title.encode() + b"\x07") == [TitleChange("abcd\u202ee\u2067f")]
    assert scan(b"\x1b]0;x" + C1_UTF8 + b"y\x1b\\") == [TitleChange("xy")]


@given(st.binary(max_size=64))
def test_no_event_carries_a_terminal_control(body: bytes) -> None:
    scanner = OscScanner(frozenset())
    for command in (b"0;", b"2;", b"7;file://", b"7;file:///", b"9;9;/"):
        for event in scanner.feed(b"\x1b]" + command + body + b"\x07"):
            if isinstance(event, TitleChange):
                assert not TERMINAL_CONTROL.search(event.title), event
            elif isinstance(event, CwdReport):
                assert not TERMINAL_CONTROL.search(event.path), event


def test_a_refused_path_leaves_the_working_directory_as_it_was() -> None:
    shell = ShellTracker(title="sh", title_explicit=False, cwd=CwdObservation("/home/u", "launch"))
    assert [shell.apply(e) for e in shell.scan(b"\x1b]7;file:///tmp/%1bx\x07")] == []
    assert (shell.cwd, shell.cwd_source) == ("/home/u", "launch")
    reactions = [shell.apply(e) for e in shell.scan(b"\x1b]7;file:///tmp\x07")]
    assert [r.changed for r in reactions if r] == [CWD_CHANGED]


def test_every_title_a_pane_gets_loses_controls() -> None:
    # A base name, or a title restored or handed over from an older muxd, as it was stored.
    shell = ShellTracker(
        title="x\x1b]0;PWNED\x07\u009by\u202e",
        title_explicit=False,
        cwd=CwdObservation("/", "launch"),
    )
    assert shell.title == "x]0;PWNEDy\u202e"
    reaction = shell.program_title("t\x1b[2J\u0085")
    assert reaction is not None and reaction.changed == TITLE_CHANGED
    assert shell.title == "t[2J"


def test_a_spawn_title_loses_controls() -> None:
    request = parse_spawn_options({"title": ("s", "w\x1b]0;PWNED\x07\u009b\u202e")})
    assert request.title == "w]0;PWNED\u202e"
    with pytest.raises(InvalidArgument, match="NUL"):
        parse_spawn_options({"title": ("s", "a\x00b")})
