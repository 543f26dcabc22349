"""A notification's text as mux writes it (mux.protocol.notices.shown and bounded;
docs/desktop.md#notifications): on one line, controls as escapes, bounded; no bus."""

from __future__ import annotations

from mux.protocol.notices import bounded, shown


def test_controls_are_escapes_and_line_breaks_are_spaces() -> None:
    assert shown("a\x1b[31mb\x07c\n\td", 100) == "a\\x1b[31mb\\x07c d"
    assert shown(" x\u202ey\x85z\x7f ", 100) == "x\\u202ey\\x85z\\x7f"


def test_a_long_text_is_cut_with_an_ellipsis_never_inside_an_escape() -> None:
    assert shown("x" * 200, 10) == "x" * 9 + "…"
    # "abcdef\x1b..." escaped is "abcdef\\x1b...": a cut after "\\x" drops the escape.
    assert shown("abcdef\x1bzzzz", 10) == "abcdef…"
    assert shown("abcde\x1bzzzz", 10) == "abcde\\x1b…"
    assert bounded("short", 10) == "short"
