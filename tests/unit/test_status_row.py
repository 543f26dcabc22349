"""The status line kept on a terminal's last row while a pane's output streams above it
(mux.protocol.status_row), with the pane's cursor put back after each drawing
(Screen.cursor_state). The outer terminal is an emulator a row taller than the pane,
fed what muxd would write: its rows above the last must be the pane's screen, its
last row the status line, its cursor the pane's."""

import codecs

import pytest
from avt._avt import Vt
from hypothesis import given, settings
from hypothesis import strategies as st

from mux.protocol.status_row import StatusRow
from mux.terminal.screen import Screen
from tests.splits import pieces as cut_into

ROWS, COLS = 8, 30  # the pane's; the terminal has one more row


def test_what_would_reach_the_last_row_stops_above_it() -> None:
    row = StatusRow(ROWS)
    row.dirty = False
    assert row.rewrite(b"a\x1b[rb") == b"a\x1b[1;8rb"  # the whole pane, not the terminal
    assert row.rewrite(b"\x1b[2;40r") == b"\x1b[2;8r"
    assert row.rewrite(b"\x1b[99;5H\x1b[99d\x1b[9f\x1b[3;4H") == b"\x1b[8;5H\x1b[8d\x1b[8f\x1b[3;4H"
    assert not row.dirty


@pytest.mark.parametrize(
    "clears",
    [
        *(b"\x1b[J", b"\x1b[0J", b"\x1b[2J", b"\x1bc", b"\x1b[!p", b"\x1b[?1049h"),
        *(b"\x1b[?47l", b"\x1b[?3h", b"\x1b#8", b"\x1b[?1;1049h", b"\x1b[?r"),
    ],
)
def test_what_clears_or_resets_the_screen_leaves_the_line_to_draw_again(clears: bytes) -> None:
    row = StatusRow(ROWS)
    row.dirty = False
    row.rewrite(b"text" + clears + b"more")
    assert row.dirty


def test_a_sequence_split_between_chunks_is_kept_until_it_is_whole() -> None:
    row = StatusRow(ROWS)
    assert row.rewrite(b"abc\x1b[3") == b"abc"
    assert not row.safe
    assert row.rewrite(b"0;1H") == b"\x1b[8;1H"
    assert row.safe


@pytest.mark.parametrize(
    ("chunks", "safe"),
    [
        ([b"\x1b]0;a title"], False),
        ([b"\x1b]0;a title", b" goes on\x07"], True),
        ([b"\x1b]52;c;YWJj", b"\x1b\\"], True),
        ([b"\x1bP+q544e"], False),
        ([b"caf\xc3"], False),
        ([b"caf\xc3", b"\xa9"], True),
        ([b"\x1b[>0;1"], False),  # (not one it rewrites, but not over either)
        ([b"\x1b(0lqk\x1b(B"], True),
    ],
)
def test_safe_only_between_sequences_and_characters(chunks: list[bytes], safe: bool) -> None:
    row = StatusRow(ROWS)
    for chunk in chunks:
        row.rewrite(chunk)
    assert row.safe is safe


def test_the_line_shows_controls_escaped_and_never_wraps() -> None:
    drawn = StatusRow(ROWS).draw("x\x1b[2Jy" + "z" * 200, b"\x1b[1;1H")
    assert b"\x1b[2J" not in drawn and b"x\\x1b[2Jy" in drawn
    assert drawn.startswith(b"\x1b[?7l") and b"\x1b[9;1H" in drawn
    assert drawn.endswith(b"\x1b[?7h\x1b[1;1H")


PIECES = st.sampled_from(
    [
        "line one\r\n",
        "".join(f"flood {i}\r\n" for i in range(20)),
        "x" * 70,  # wraps
        "\x1b[31mred\x1b[0m",
        "\x1b[1;4;7mbold\x1b[m",
        # a scroll region as programs use them: for one scroll, the cursor inside
        "\x1b[2;5r\x1b[3;1Hin the region\x1bM\r\n\x1b[r",
        "\x1b[2;5r\x1b[5;1Hscrolled up\r\n\x1b[1;8r\x1b[8;1H",
        "\x1b[r",
        "\x1b[99;3H",
        "\x1b[5;1Hat five",
        "\x1b[?6h",
        "\x1b[?6l",
        "\x1b[?1049h",
        "\x1b[?1049l",
        "\x1b[2J",
        "\x1b[J",
        "\x1b[4h",
        "\x1b[4l",
        "\x1b[?7l",
        "\x1b[?7h",
        "\x1b(0lqqk\x1b(B",
        "\x1b)0\x0eab\x0f",
        "\x1b7",
        "\x1b8",
        "\x1bM\x1bM",
        "\x1b[3S",
        "\x1b[2T",
        "\x1b[2L",
        "\x1b[3M",
        "\x1b[5@",
        "\x1b]0;title\x07",
        "wide 漢字\r\n",
        "\t|\b\b|",
        "\x1b[30d",
        "\x1b[10B",
        "\x1b[",
        "\x1bc",
    ]
)


def _lines(vt: Vt) -> list[str]:
    return [line.text for line in vt.view()]


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=12), st.lists(st.integers(0, 10**6), max_size=5))
def test_the_terminal_shows_the_pane_above_and_the_line_below(
    pieces: list[str], cuts: list[int]
) -> None:
    data = "".join(pieces).encode()
    pane = Screen(ROWS, COLS)
    terminal = Vt(COLS, ROWS + 1)
    utf8 = codecs.getincrementaldecoder("utf-8")("replace")  # (as a terminal reads it)
    row = StatusRow(ROWS)
    # As an attach starts: the pane's repaint, then the line.
    terminal.feed_str(row.rewrite(pane.repaint().encode()).decode())
    terminal.feed_str(row.draw("the status", pane.cursor_state().encode()).decode())
    for chunk in cut_into(data, cuts):
        terminal.feed_str(utf8.decode(row.rewrite(chunk)))
        pane.feed(chunk)
        if row.dirty and row.safe:  # as muxd: once what was written is in the pane's screen
            terminal.feed_str(row.draw("the status", pane.cursor_state().encode()).decode())
    if not row.safe:
        return  # (the stream stopped inside a sequence: nothing more to compare now)
    if row.dirty:
        terminal.feed_str(row.draw("the status", pane.cursor_state().encode()).decode())
    shown = _lines(terminal)
    assert shown[:ROWS] == _pane_lines(pane)
    assert shown[ROWS].startswith("the status")
    assert (terminal.cursor.row, terminal.cursor.col) == pane.cursor()


def _pane_lines(pane: Screen) -> list[str]:
    vt = Vt(COLS, ROWS)
    vt.feed_str(pane.repaint())
    return _lines(vt)
