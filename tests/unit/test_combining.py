"""Combining marks composed for the emulator (mux.protocol.combining)."""

from hypothesis import given
from hypothesis import strategies as st

from mux.protocol.combining import composed
from mux.terminal.screen import Screen


def test_a_letter_and_its_marks_become_one_character() -> None:
    assert composed("C" * 3 + "\u0301") == "CCĆ"
    assert composed("e\u0301 a\u0300 n\u0303") == "é à ñ"
    assert composed("\x1b[31me\u0301\x1b[0m") == "\x1b[31mé\x1b[0m"


def test_marks_that_do_not_compose_are_left_out() -> None:
    assert composed("ax\u0301c") == "axc"
    assert composed("\u0301start") == "start"  # (no letter before it)
    assert composed("\x1b\u0301") == "\x1b"  # (not after a control either)
    assert composed("日本\u0300語") == "日本語"


def test_ascii_and_other_scripts_pass_as_they_are() -> None:
    assert composed("plain ascii \x1b[1;3H") == "plain ascii \x1b[1;3H"
    assert composed("日本語 ─┼─ 🙂") == "日本語 ─┼─ 🙂"


@given(st.text())
def test_no_combining_diacritical_mark_is_left(text: str) -> None:
    assert not any(0x300 <= ord(char) <= 0x36F for char in composed(text))


def test_the_screen_keeps_every_column_in_place() -> None:
    screen = Screen(3, 10)
    screen.feed(("C" * 10 + "\u0301\r\nae\u0301c\x1b[2;3HZ").encode())
    assert screen.lines()[:2] == ["C" * 9 + "Ć", "aéZ"]
