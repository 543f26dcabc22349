"""mux.protocol.visible (SPEC §12) and muxctl's one place that uses it for people
(muxctl.output): every C0, DEL, C1 and bidi control comes out as a readable escape, text
without them is unchanged, and JSON keeps the exact string."""

from __future__ import annotations

import io
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mux.protocol.visible import (
    has_controls,
    has_terminal_controls,
    visible,
    visible_lines,
    without_controls,
)
from muxctl.main import main
from muxctl.output import PersonStream, exact_stdout, print_json, print_table

CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b]52;c;SGVsbG8=\x07", "\\x1b]52;c;SGVsbG8=\\x07"),
        ("a\x00b\x7fc", "a\\x00b\\x7fc"),
        ("\u009b2J", "\\x9b2J"),
        ("\u0085", "\\x85"),
        ("rm -rf \u202e~", "rm -rf \\u202e~"),
        ("\u061c\u200e\u200f\u2066\u2069", "\\u061c\\u200e\\u200f\\u2066\\u2069"),
        ("line\nnext\ttab\r", "line\\x0anext\\x09tab\\x0d"),
        ("C:\\Users\\x1b", "C:\\Users\\x1b"),  # a backslash is no control: left alone
        ("caf\u00e9 \u05d0\u05d1 \U0001f600", "caf\u00e9 \u05d0\u05d1 \U0001f600"),
        ("\u00a0\u00ad", "\u00a0\u00ad"),  # just past C1: printable (a space, a soft hyphen)
    ],
)
def test_visible_escapes_each_control(text: str, shown: str) -> None:
    assert visible(text) == shown
    assert has_controls(text) == (text != shown)


def test_visible_lines_keeps_newlines_and_tabs_only() -> None:
    assert visible_lines("a\nb\tc\r\x1b[2J\u202e") == "a\nb\tc\\x0d\\x1b[2J\\u202e"


def test_without_controls_keeps_bidi_for_titles() -> None:
    assert without_controls("a\x1b]0;t\x07\x7f\u009b\u0080b\u202ec") == "a]0;tb\u202ec"
    assert has_terminal_controls("\u0085") and not has_terminal_controls("\u202e")


@given(st.text())
def test_visible_leaves_no_control_and_changes_nothing_else(text: str) -> None:
    shown = visible(text)
    assert not CONTROLS.search(shown)
    assert visible(shown) == shown  # escaping twice is escaping once
    assert (shown == text) == (not has_controls(text))
    assert not CONTROLS.search(visible_lines(text).replace("\n", "").replace("\t", ""))
    assert not re.search("[\x00-\x1f\x7f-\x9f]", without_controls(text))


def test_a_person_stream_escapes_what_it_is_given() -> None:
    exact = io.StringIO()
    stream = PersonStream(exact)
    print("title \x1b]0;x\x07", "\u202e", file=stream)
    assert exact.getvalue() == "title \\x1b]0;x\\x07 \\u202e\n"


def test_tables_line_up_as_printed(capsys: pytest.CaptureFixture[str]) -> None:
    print_table(["ID", "TITLE", "CWD"], [["1", "a\x1bb", "/x"], ["22", "plain", "/t\ty"]])
    assert capsys.readouterr().out.splitlines() == [
        "ID  TITLE   CWD",
        "1   a\\x1bb  /x",
        "22  plain   /t\\x09y",
    ]


def test_json_keeps_the_exact_string(capsys: pytest.CaptureFixture[str]) -> None:
    print_json({"title": "a\x1b\u009b\u202e"})
    out = capsys.readouterr().out
    assert out.isascii() and json.loads(out) == {"title": "a\x1b\u009b\u202e"}


def test_muxctl_prints_through_a_person_stream_and_restores_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import sys

    before = sys.stdout
    status = main(["--host", "bad\x1bname", "ls"])
    assert status == 2 and sys.stdout is before
    err = capsys.readouterr().err
    assert "\x1b" not in err and "bad\\x1bname" in err


def test_exact_stdout_is_the_stream_under_the_escaping() -> None:
    import sys

    exact = io.StringIO()
    saved = sys.stdout
    sys.stdout = PersonStream(exact)  # type: ignore[assignment]
    try:
        assert exact_stdout() is exact
    finally:
        sys.stdout = saved
    assert exact_stdout() is saved
