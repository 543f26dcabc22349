"""A window's panes composed on one terminal: what `render` writes, applied to a second
emulator standing for the real terminal, shows each pane in its region, the borders,
the colours and the focused pane's cursor, and writes only what changed."""

import re

from avt._avt import Color, Vt

from mux.protocol.regions import Border, Rect, Regions
from muxctl.pane_screen import row_form, sgr
from muxctl.window_screen import WindowScreen

ROWS, COLS = 24, 80
# Two panes side by side: left columns 0-38, the border at 39, right 40-79.
SIDE_BY_SIDE = Regions(
    {1: Rect(0, 0, ROWS, 39), 2: Rect(0, 40, ROWS, 40)}, (Border(0, 39, ROWS, vertical=True),)
)
# Three: the left one, and the right side split in two (a border across at row 11).
NESTED = Regions(
    {1: Rect(0, 0, ROWS, 39), 2: Rect(0, 40, 11, 40), 3: Rect(12, 40, 12, 40)},
    (Border(0, 39, ROWS, vertical=True), Border(11, 40, 40, vertical=False)),
)
ZOOMED = Regions({2: Rect(0, 0, ROWS, COLS)}, ())
CUP = re.compile(rb"\x1b\[(\d+);(\d+)H")


def screen_of(regions: Regions, focus: int, size: tuple[int, int] = (ROWS, COLS)) -> WindowScreen:
    screen = WindowScreen(*size)
    screen.set_layout(regions, focus, size)
    return screen


def terminal(size: tuple[int, int] = (ROWS, COLS)) -> Vt:
    return Vt(size[1], size[0], scrollback_limit=0)


def shown(term: Vt, output: bytes) -> list[str]:
    """The terminal's rows after `output`, trailing blanks kept."""
    term.feed_str(output.decode())
    return [line.text for line in term.view()]


def cups(output: bytes) -> set[tuple[int, int]]:
    """Every place the output moves the cursor to, 1-based as written."""
    return {(int(row), int(col)) for row, col in CUP.findall(output)}


def test_each_pane_is_drawn_in_its_region_with_a_border_between() -> None:
    screen = screen_of(SIDE_BY_SIDE, 1)
    screen.feed(1, b"left one\r\nleft two")
    screen.feed(2, b"right one\r\n\r\nright three")
    rows = shown(terminal(), screen.render())
    assert rows[0][:39].rstrip() == "left one"
    assert rows[1][:39].rstrip() == "left two"
    assert rows[0][40:].rstrip() == "right one"
    assert rows[2][40:].rstrip() == "right three"
    assert all(row[39] == "│" for row in rows)
    assert all(row[40:].strip() == "" for row in rows[3:])


def test_nested_regions_and_their_junction() -> None:
    screen = screen_of(NESTED, 3)
    screen.feed(1, b"one")
    screen.feed(2, b"two")
    screen.feed(3, b"three")
    rows = shown(terminal(), screen.render())
    assert rows[0].startswith("one")
    assert rows[0][40:].rstrip() == "two"
    assert rows[12][40:].rstrip() == "three"
    assert rows[11][39:] == "├" + "─" * 40
    assert [row[39] for row in rows[:11]] == ["│"] * 11


def test_the_focused_panes_border_is_green_the_others_default() -> None:
    screen = screen_of(NESTED, 3)
    term = terminal()
    shown(term, screen.render())
    green = Color.Indexed(2)[0]

    def foreground(row: int, col: int) -> Color | None:
        return term.view()[row].cells[col].pen.foreground

    for row, col in [(11, 39), (11, 40), (11, 79), (12, 39), (23, 39)]:
        colour = foreground(row, col)
        assert isinstance(colour, Color.Indexed) and colour[0] == green, (row, col)
    assert foreground(5, 39) is None  # beside panes 1 and 2 only
    screen.set_layout(NESTED, 2, (ROWS, COLS))  # the focus moves up
    output = screen.render()
    assert {col for _, col in cups(output)} == {40, 41}  # the borders, then the cursor
    shown(term, output)
    assert isinstance(foreground(5, 39), Color.Indexed)
    assert foreground(12, 39) is None and foreground(23, 39) is None


def test_long_lines_stop_at_the_regions_edge() -> None:
    screen = screen_of(SIDE_BY_SIDE, 1)
    screen.feed(1, b"\x1b[?7l" + b"x" * 100)  # no wrapping: the line is cut by the pane
    screen.feed(1, b"\r\n" + b"y" * 39)
    rows = shown(terminal(), screen.render())
    assert rows[0] == "x" * 39 + "│" + " " * 40
    assert rows[1] == "y" * 39 + "│" + " " * 40


def test_a_wide_character_crossing_the_edge_becomes_a_space() -> None:
    vt = Vt(4, 1, scrollback_limit=0)
    vt.feed_str("ab世")
    cells = vt.view()[0].cells
    assert row_form(cells, 4) == "ab世"  # its continuation cell skipped
    assert row_form(cells, 3) == "ab "
    assert row_form(cells, 6) == "ab世  "  # padded


def test_nothing_is_written_outside_a_smaller_terminal_nor_in_its_last_cell() -> None:
    small = (10, 50)
    screen = screen_of(SIDE_BY_SIDE, 2, small)  # regions for a larger one
    for row in range(ROWS):
        screen.feed(1, f"{row:<39}".encode().replace(b" ", b"a"))
        screen.feed(2, b"b" * 40)
    output = screen.render()
    assert all(row <= 10 and col <= 50 for row, col in cups(output))
    rows = shown(terminal(small), output)
    assert rows[0].startswith("0a") and rows[9].startswith("9a")  # nothing scrolled
    assert rows[0][39:] == "│" + "b" * 10
    assert rows[9][39:] == "│" + "b" * 9 + " "  # its last cell left alone


def test_the_last_cell_of_the_last_row_is_never_written() -> None:
    screen = screen_of(ZOOMED, 2)
    screen.feed(2, b"top\x1b[24;1H" + b"z" * 79 + b"\x1b[?7lZ")
    output = screen.render()
    assert b"z" * 79 + b"Z" not in output
    rows = shown(terminal(), output)
    assert rows[0].startswith("top")  # nothing scrolled
    assert rows[23] == "z" * 79 + " "


def test_colours_and_attributes_are_kept() -> None:
    screen = screen_of(SIDE_BY_SIDE, 1)
    screen.feed(2, b"\x1b[1;31mred\x1b[0m \x1b[38;5;200;4mpink\x1b[0m \x1b[48;2;1;2;3mrgb\x1b[0m")
    screen.feed(2, b" \x1b[92;7mbright\x1b[0m")
    term = terminal()
    rows = shown(term, screen.render())
    assert rows[0][40:].rstrip() == "red pink rgb bright"
    cells = term.view()[0].cells
    red, pink, rgb, bright = cells[40].pen, cells[44].pen, cells[49].pen, cells[53].pen
    plain = cells[43].pen
    assert isinstance(red.foreground, Color.Indexed) and red.foreground[0] == 1 and red.bold
    assert isinstance(pink.foreground, Color.Indexed) and pink.foreground[0] == 200
    assert pink.underline and not pink.bold
    assert isinstance(rgb.background, Color.RGB)
    assert (rgb.background[0], rgb.background[1], rgb.background[2]) == (1, 2, 3)
    assert isinstance(bright.foreground, Color.Indexed) and bright.foreground[0] == 10
    assert bright.inverse
    assert plain.is_default()
    assert term.view()[0].cells[60].pen.is_default()  # the padding after the text


def test_sgr_forms() -> None:
    vt = Vt(8, 1, scrollback_limit=0)
    vt.feed_str(
        "\x1b[2;3;5;9;33;44ma\x1b[0m\x1b[38;5;16;48;5;255mb\x1b[0m\x1b[38;2;9;8;7;103mc\x1b[0md"
    )
    cells = vt.view()[0].cells
    assert sgr(cells[0].pen) == "\x1b[33;44;2;3;5;9m"  # (colours first: mux.protocol.pen_sgr)
    assert sgr(cells[1].pen) == "\x1b[38;5;16;48;5;255m"
    assert sgr(cells[2].pen) == "\x1b[38;2;9;8;7;103m"
    assert sgr(cells[3].pen) == ""
    assert row_form(cells, 5) == (
        "\x1b[33;44;2;3;5;9ma\x1b[0m\x1b[38;5;16;48;5;255mb\x1b[0m\x1b[38;2;9;8;7;103mc\x1b[0md "
    )


def test_nothing_changed_renders_nothing() -> None:
    screen = screen_of(SIDE_BY_SIDE, 1)
    screen.feed(1, b"hello")
    assert screen.render() != b""
    assert screen.render() == b""
    screen.set_layout(SIDE_BY_SIDE, 1, (ROWS, COLS))  # the same arrangement again
    screen.feed(3, b"no such pane")
    screen.feed(1, b"\x1b[1D\x1b[1C")  # the cursor back where it was
    assert screen.render() == b""


def test_a_change_in_one_pane_draws_only_its_changed_rows() -> None:
    screen = screen_of(SIDE_BY_SIDE, 2)
    term = terminal()
    screen.feed(1, b"left\r\nleft")
    screen.feed(2, b"right\r\nright\r\n")
    shown(term, screen.render())
    screen.feed(2, b"more")  # on the right pane's third row
    output = screen.render()
    assert cups(output) == {(3, 41), (3, 45)}  # the row, then the cursor after "more"
    assert b"left" not in output and b"right" not in output
    rows = shown(term, output)
    assert rows[2][40:].rstrip() == "more"
    assert rows[0][:39].rstrip() == "left" and rows[0][40:].rstrip() == "right"
    screen.feed(1, b"\x1b[1;1Hleft")  # rewritten the same, by a pane not focused
    assert screen.render() == b""
    screen.feed(2, b"\x1b[1;1H")  # the focused pane's cursor moves: only the cursor
    assert screen.render() == b"\x1b[1;41H\x1b[?25h"


def test_the_cursor_ends_at_the_focused_panes_cursor() -> None:
    screen = screen_of(NESTED, 3)
    term = terminal()
    screen.feed(1, b"typing in one")
    screen.feed(3, b"\r\nab")
    shown(term, screen.render())
    assert (term.cursor.row, term.cursor.col, term.cursor.visible) == (13, 42, True)
    screen.set_layout(NESTED, 1, (ROWS, COLS))
    shown(term, screen.render())
    assert (term.cursor.row, term.cursor.col) == (0, 13)


def test_a_hidden_cursor_is_hidden() -> None:
    screen = screen_of(SIDE_BY_SIDE, 1)
    term = terminal()
    shown(term, screen.render())
    screen.feed(1, b"\x1b[?25l")
    output = screen.render()
    assert output.endswith(b"\x1b[?25l")
    shown(term, output)
    assert not term.cursor.visible
    screen.feed(2, b"\x1b[?25l")  # not the focused pane's: nothing to do
    assert screen.render() == b""
    screen.feed(1, b"\x1b[?25h")
    assert screen.render().endswith(b"\x1b[?25h")


def test_a_utf8_sequence_split_across_feeds_is_kept() -> None:
    screen = screen_of(SIDE_BY_SIDE, 1)
    accented, wide = "é".encode(), "世".encode()
    screen.feed(1, b"caf" + accented[:1])
    screen.feed(1, accented[1:] + wide[:1])
    screen.feed(1, wide[1:2])
    screen.feed(1, wide[2:] + b"!")
    rows = shown(terminal(), screen.render())
    assert rows[0].startswith("café世")
    assert "\ufffd" not in rows[0]


def test_a_reset_pane_starts_blank_and_only_changed_rows_are_drawn() -> None:
    screen = screen_of(SIDE_BY_SIDE, 1)
    term = terminal()
    screen.feed(1, b"kept\r\ngone")
    shown(term, screen.render())
    screen.reset(1)
    screen.feed(1, b"kept")  # the repaint
    output = screen.render()
    assert {row for row, _ in cups(output)} == {2, 1}  # row 2 blanked, the cursor on row 1
    rows = shown(term, output)
    assert rows[0].startswith("kept") and rows[1][:39].strip() == ""


def test_zoomed_then_back() -> None:
    screen = screen_of(SIDE_BY_SIDE, 2)
    term = terminal()
    screen.feed(1, b"one")
    screen.feed(2, b"two")
    shown(term, screen.render())
    screen.set_layout(ZOOMED, 2, (ROWS, COLS))
    output = screen.render()
    assert b"\x1b[2J" not in output  # the zoomed pane covers everything
    rows = shown(term, output)
    assert rows[0].rstrip() == "two"
    assert not any("│" in row for row in rows)
    screen.feed(1, b"hidden")  # pane 1 is no longer shown: ignored
    assert screen.render() == b""
    screen.set_layout(SIDE_BY_SIDE, 2, (ROWS, COLS))
    screen.feed(1, b"new one")  # a new emulator: its repaint follows
    rows = shown(term, screen.render())
    assert rows[0][:39].rstrip() == "new one"
    assert rows[0][40:].rstrip() == "two"
    assert all(row[39] == "│" for row in rows)


def test_a_resize_draws_everything_at_the_new_size() -> None:
    screen = screen_of(SIDE_BY_SIDE, 1)
    term = terminal()
    screen.feed(1, b"one")
    screen.feed(2, b"two")
    shown(term, screen.render())
    bigger = Regions(
        {1: Rect(0, 0, 30, 49), 2: Rect(0, 50, 30, 50)}, (Border(0, 49, 30, vertical=True),)
    )
    screen.set_layout(bigger, 1, (30, 100))
    term.resize(100, 30)
    rows = shown(term, screen.render())
    assert rows[0] == "one" + " " * 46 + "│" + "two" + " " * 47
    assert all(row[49] == "│" for row in rows) and all(row[39] == " " for row in rows)
    screen.feed(1, b"x" * 47)  # the left pane is 49 wide now
    assert shown(term, screen.render())[0][:50] == "one" + "x" * 46 + "│"


def test_cells_left_to_no_pane_are_cleared_and_empty_regions_draw_nothing() -> None:
    screen = screen_of(SIDE_BY_SIDE, 1)
    term = terminal()
    screen.feed(2, b"stale")
    shown(term, screen.render())
    partial = Regions({1: Rect(0, 0, 10, 39), 2: Rect(0, 0, 0, 0)}, ())
    screen.set_layout(partial, 2, (ROWS, COLS))
    screen.feed(2, b"nowhere")
    output = screen.render()
    assert output.startswith(b"\x1b[?25l\x1b[0m\x1b[H\x1b[2J")
    assert b"nowhere" not in output
    assert output.endswith(b"\x1b[?25l")  # the focused pane has no cells: no cursor
    rows = shown(term, output)
    assert all(row.strip() == "" for row in rows)


def test_full_draws_everything_after_a_clear() -> None:
    screen = screen_of(NESTED, 2)
    screen.feed(1, b"one")
    screen.feed(3, b"three")
    screen.render()
    output = screen.full()
    assert b"\x1b[H\x1b[2J" in output[: output.index(b"one")]
    assert b"three" in output
    rows = shown(terminal(), output)
    assert rows[0].startswith("one") and rows[12][40:].startswith("three")
    assert rows[11][39] == "├"
    assert screen.render() == b""
    assert WindowScreen(ROWS, COLS).full() == b"\x1b[?25l\x1b[0m\x1b[H\x1b[2J\x1b[1;1H\x1b[?25l"
