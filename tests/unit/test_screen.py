from hypothesis import given
from hypothesis import strategies as st

from mux.terminal.screen import Screen


def test_text_lines_trimmed() -> None:
    screen = Screen(rows=4, cols=20)
    screen.feed(b"hello   \r\n\x1b[31mred\x1b[0m\r\n")
    assert screen.lines() == ["hello", "red", "", ""]


def test_resize() -> None:
    screen = Screen(rows=4, cols=20)
    screen.resize(rows=10, cols=40)
    assert (screen.rows, screen.cols) == (10, 40)
    assert len(screen.lines()) == 10


def test_repaint_reproduces_the_screen() -> None:
    screen = Screen(rows=5, cols=30)
    screen.feed("a\r\n\x1b[1;32mgrün\x1b[0m\r\n  indented".encode())
    copy = Screen(rows=5, cols=30)
    copy.feed(screen.repaint().encode())
    assert copy.lines() == screen.lines()


@given(st.text(max_size=200), st.lists(st.integers(min_value=0, max_value=800), max_size=8))
def test_any_split_of_utf8_gives_the_same_screen(text: str, cuts: list[int]) -> None:
    data = text.replace("\x1b", "").encode()
    whole = Screen(rows=6, cols=30)
    whole.feed(data)
    pieces = Screen(rows=6, cols=30)
    last = 0
    for cut in sorted(c % (len(data) + 1) for c in cuts):
        pieces.feed(data[last:cut])
        last = cut
    pieces.feed(data[last:])
    assert pieces.lines() == whole.lines()


def test_invalid_utf8_is_replaced_not_raised() -> None:
    screen = Screen(rows=2, cols=10)
    screen.feed(b"a\xff\xfeb")
    assert screen.lines()[0].startswith("a")
