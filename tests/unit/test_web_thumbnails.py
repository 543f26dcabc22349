"""The overview's thumbnails read from avt's dump (muxctl.web.thumbnails), against the
screen read cell by cell: the same rows, runs, colours and flags."""

from __future__ import annotations

from avt._avt import Cell, Color, Pen, Vt
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from muxctl.web.thumbnails import Run, indexed_colour, rgb_colour, rows_of_dump

_FLAGS = (
    ("bold", "b"),
    ("faint", "f"),
    ("italic", "i"),
    ("underline", "u"),
    ("inverse", "r"),
    ("strikethrough", "s"),
)


def _colour(colour: Color | None) -> str:
    if colour is None:
        return ""
    if isinstance(colour, Color.RGB):
        return rgb_colour(colour[0], colour[1], colour[2])
    assert isinstance(colour, Color.Indexed)
    return indexed_colour(colour[0])


def _style(pen: Pen) -> tuple[str, ...]:
    flags = "".join(code for name, code in _FLAGS if getattr(pen, name))
    fg, bg = _colour(pen.foreground), _colour(pen.background)
    return (fg, bg, flags) if fg or bg or flags else ()


def _row_by_cells(cells: list[Cell]) -> list[Run]:
    """The oracle: a row walked cell by cell."""
    runs: list[Run] = []
    style: tuple[str, ...] | None = None
    for cell in cells:
        if cell.width == 0:
            continue
        cell_style = _style(cell.pen)
        if runs and cell_style == style:
            runs[-1][0] += cell.char
        else:
            runs.append([cell.char, *cell_style])
            style = cell_style
    if runs and len(runs[-1]) == 1:
        trimmed = runs[-1][0].rstrip(" ")
        if trimmed:
            runs[-1] = [trimmed]
        else:
            runs.pop()
    return runs


def _both(stream: str, rows: int, cols: int) -> tuple[object, object]:
    vt = Vt(cols, rows, scrollback_limit=0)
    try:
        vt.feed_str(stream)
    except BaseException as e:  # (avt panics: a wide character in 1 column, say)
        if type(e).__name__ != "PanicException":
            raise
        reject()  # (the web view's emulator starts blank then: muxctl.pane_screen)
    return rows_of_dump(vt.dump(), rows, cols), [_row_by_cells(line.cells) for line in vt.view()]


def test_colours_flags_wide_characters_and_wrapped_rows() -> None:
    stream = (
        "\x1b[31;1mred\x1b[0m plain \x1b[7m漢字\x1b[0m\r\n"
        "\x1b[38;2;1;2;3;48;5;100mrgb\x1b[0m \x1b[4;9mstruck\x1b[0m \x1b[96mbright\r\n" + "w" * 25
    )
    by_dump, by_cells = _both(stream, 5, 20)
    assert by_dump == by_cells
    assert by_dump == [
        [["red", "#cd0000", "", "b"], [" plain "], ["漢字", "", "", "r"]],
        [
            ["rgb", "#010203", "#878700", ""],
            [" "],
            ["struck", "", "", "us"],
            [" "],
            ["bright", "#00ffff", "", ""],
        ],
        [["w" * 20, "#00ffff", "", ""]],  # (the pen stays)
        [["w" * 5, "#00ffff", "", ""]],
        [],
    ]


_PIECES = st.sampled_from(
    [
        "a", "word ", "  ", "漢", "é", "─", "\r\n", "\n", "\r", "\t", "\b",
        "\x1b[1m", "\x1b[2m", "\x1b[3m", "\x1b[4m", "\x1b[5m", "\x1b[7m", "\x1b[9m", "\x1b[0m",
        "\x1b[31m", "\x1b[42m", "\x1b[95m", "\x1b[104m", "\x1b[38;5;123m", "\x1b[48;5;240m",
        "\x1b[38;2;10;20;30m", "\x1b[39m", "\x1b[49m", "\x1b[22m", "\x1b[27m",
        "\x1b[H", "\x1b[3;5H", "\x1b[2J", "\x1b[K", "\x1b[1K", "\x1b[L", "\x1b[M", "\x1b[2@",
        "\x1b[3P", "\x1b[?7l", "\x1b[?7h", "\x1b[2;4r", "\x1b[r", "\x1bM", "\x1b[5X",
        "x" * 30, " " * 12,
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_PIECES, max_size=60),
    st.integers(min_value=1, max_value=12),
    st.integers(min_value=1, max_value=40),
)
def test_the_dump_reads_as_the_cells_say(pieces: list[str], rows: int, cols: int) -> None:
    by_dump, by_cells = _both("".join(pieces), rows, cols)
    assert by_dump == by_cells


def test_a_dump_with_more_rows_than_asked_or_fewer() -> None:
    assert rows_of_dump("a\r\nb\r\nc", 2, 5) == [[["a"]], [["b"]]]
    assert rows_of_dump("", 2, 5) == [[], []]
    assert rows_of_dump("\x1b[99999b", 1, 3) == [[]]  # (a REP of nothing)
