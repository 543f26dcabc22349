import re

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


SEQUENCES = [
    "hello",
    "\r\n",
    "\x1b[31m",
    "\x1b[0m",
    "\x1b[2J",
    "\x1b[H",
    "\x1b[5;10H",
    "\x1b[?1049h",
    "\x1b[?1049l",
    "\x1b[2;5r",
    "\x1b[1;44m",
    "wide世界",
    "\x1b[K",
    "\x1b[?25l",
    "\x1b(0lqk\x1b(B",
    "\t",
    "\x1b[3@",
    "\x1b[2M",
    "\x1bD",
    "\x1bM",
    "\x1b7",
    "\x1b8",
    "x" * 90,
    "\x1b[?7l",
    "\x1b[?7h",
    "\x1b[4h",
    "\x1b[4l",
    "\x1b[?6h",
    "\x1b[?6l",
]


@given(
    st.lists(st.sampled_from(SEQUENCES), max_size=40),
    st.lists(st.sampled_from(SEQUENCES), max_size=10),
)
def test_hibernation_loses_nothing(before: list[str], after: list[str]) -> None:
    """A hibernated screen, woken up, is the same and goes on the same."""
    awake = Screen(rows=6, cols=20)
    sleeper = Screen(rows=6, cols=20)
    for screen in (awake, sleeper):
        screen.feed("".join(before).encode())
    sleeper.hibernate()
    assert not sleeper.is_live
    for screen in (awake, sleeper):
        screen.feed("".join(after).encode())
    assert sleeper.lines() == awake.lines()
    assert sleeper.repaint() == awake.repaint()


REPEATED_RUNS = [
    "─" * 30,
    "x" * 25,
    "世" * 12,
    "e\u0301" * 5,
    "\x1b[7m" + " " * 18,
    "\x1b(0" + "q" * 20 + "\x1b(B",
]


@given(st.lists(st.sampled_from(SEQUENCES + REPEATED_RUNS), max_size=30))
def test_a_repaint_spells_every_character_out(pieces: list[str]) -> None:
    """No REP (`CSI n b`) in a repaint: not every terminal repeats what it is asked to
    (issue #32); fed to a blank terminal, the repaint still makes the same screen."""
    screen = Screen(rows=6, cols=20)
    screen.feed("".join(pieces).encode())
    repaint = screen.repaint()
    assert not re.search(r"\x1b\[\d*b", repaint), repaint
    copy = Screen(rows=6, cols=20)
    copy.feed(repaint.encode())
    assert copy.lines() == screen.lines()
    assert copy.cursor() == screen.cursor()


def test_no_emulator_until_used() -> None:
    screen = Screen(rows=24, cols=80)
    assert not screen.is_live
    assert screen.lines() == [""] * 24
    assert screen.is_live
    screen.hibernate()
    screen.resize(rows=30, cols=100)
    assert screen.is_live
    assert (screen.rows, screen.cols) == (30, 100)


def test_an_emulator_failure_resets_the_screen_instead_of_raising() -> None:
    """avt panics (a BaseException) on some inputs, e.g. a wide character squeezed
    into one column; the service must survive with a blank screen."""
    screen = Screen(rows=4, cols=10)
    screen.feed("漢字".encode())
    screen.resize(rows=4, cols=1)
    assert (screen.rows, screen.cols) == (4, 1)
    assert len(screen.lines()) == 4
    screen.feed(b"\x1b[?7l\xf0\x9f\x98\x80 more")
    screen.lines()
    screen.hibernate()
    screen.resize(rows=5, cols=12)
    screen.feed(b"after")
    assert "after" in "".join(screen.lines())


def test_output_does_not_count_as_use() -> None:
    """A program that keeps printing must not keep its emulator from hibernating."""
    screen = Screen(rows=4, cols=10)
    screen.lines()
    looked_at = screen.last_used
    screen.feed(b"more output\r\n" * 10)
    assert screen.last_used == looked_at
    screen.lines()
    assert screen.last_used > looked_at
