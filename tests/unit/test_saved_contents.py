"""A pane's saved contents (mux.terminal.saved_contents): text with SGR only, whatever the
program wrote; the restored marker and mux's notices wrapped at word boundaries."""

import codecs
import re
from collections.abc import Iterable, Iterator

from avt._avt import Color, Line, Vt
from avt._avt.util import TextUnwrapper
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mux.panes.pane_view import PaneView, notice_line
from mux.panes.restored_marker import restored_marker
from mux.protocol.combining import composed
from mux.protocol.dec_graphics import GraphicsTranslator
from mux.protocol.modes import ModeTracker
from mux.terminal.saved_contents import contents_of, wrap_words
from mux.terminal.styled_rows import row_text

ROWS, COLS = 6, 30
# Text, SGR (ESC [ digits/semicolons m) and CR LF: nothing else reaches a terminal.
ONLY_TEXT_AND_SGR = re.compile(r"(?:\x1b\[[0-9;]*m|\r\n|[^\x00-\x1f\x7f-\x9f])*")


def fed_view(data: bytes, rows: int = ROWS, cols: int = COLS) -> PaneView:
    view = PaneView.blank(rows, cols, 1 << 20)
    view.scrollback.append(data)
    view.queue_for_emulation(data)
    return view


def saved(view: PaneView, *, max_lines: int = 2000, max_bytes: int = 1 << 20) -> bytes:
    dump, _ = view.dump_screen()
    return contents_of(
        view.scrollback.contents(),
        dump,
        view.rows,
        view.cols,
        max_lines=max_lines,
        max_bytes=max_bytes,
        history_cut=view.scrollback.total > len(view.scrollback),
    )


def emulated(data: bytes, rows: int = ROWS, cols: int = COLS, scrollback: int = 2000) -> Vt:
    vt = Vt(cols, rows, scrollback_limit=scrollback)
    vt.feed_str(data.decode("utf-8", errors="replace"))
    return vt


def text_lines(contents: bytes) -> list[str]:
    return re.sub(r"\x1b\[[0-9;]*m", "", contents.decode()).split("\r\n")[:-1]


def styled_cells(line: Line) -> list[tuple[str, tuple[object, ...]]]:
    """Each cell's character and pen, comparable (avt's colours compare by identity)."""
    cells: list[tuple[str, tuple[object, ...]]] = []
    for cell in line.cells:
        pen = cell.pen
        flags = (pen.bold, pen.faint, pen.italic, pen.underline, pen.inverse, pen.strikethrough)
        cells.append((cell.char, (_colour(pen.foreground), _colour(pen.background), *flags)))
    return cells


def _colour(colour: Color | None) -> tuple[int, ...] | None:
    if isinstance(colour, Color.RGB):
        return (colour[0], colour[1], colour[2])
    if isinstance(colour, Color.Indexed):
        return (colour[0],)
    return None


def test_coloured_output_keeps_its_colours_and_attributes() -> None:
    output = (
        b"plain \x1b[31mred\x1b[0m \x1b[1;4;44mbold underlined on blue\x1b[0m\r\n"
        b"\x1b[38;5;202mindexed\x1b[0m \x1b[38;2;10;20;30;48;2;1;2;3mrgb\x1b[0m "
        b"\x1b[2;3;7;9mdim italic reverse struck\x1b[0m\r\n\x1b[92mbright\x1b[0m"
    )
    contents = saved(fed_view(output))
    assert b"\x1b[0;31mred\x1b[0m" in contents
    original, restored = emulated(output), emulated(contents)
    for before, after in zip(original.view()[:3], restored.view()[:3], strict=True):
        assert styled_cells(before) == styled_cells(after)


def test_lines_scrolled_off_come_before_the_screen_and_wrapped_lines_stay_whole() -> None:
    long_line = b"a long line that the terminal wraps into two rows"
    output = b"".join(b"line %d\r\n" % n for n in range(20)) + long_line + b"\r\n$ "
    contents = saved(fed_view(output))
    assert text_lines(contents) == [f"line {n}" for n in range(20)] + [long_line.decode(), "$"]


def test_a_full_screen_program_is_saved_as_lines_below_the_shell() -> None:
    output = (
        b"$ ls\r\nfile\r\n$ vim file\r\n"
        b"\x1b[?1049h\x1b[?1h\x1b=\x1b[H\x1b[2Jhello from vim"
        b'\x1b[3;1H~\x1b[6;1H\x1b[7m"file"\x1b[0m'
    )
    contents = saved(fed_view(output))
    assert text_lines(contents) == [
        "$ ls",
        "file",
        "$ vim file",
        "hello from vim",
        "",
        "~",
        "",
        "",
        '"file"',
    ]
    assert b'\x1b[0;7m"file"' in contents
    after = emulated(contents)
    assert not after.cursor_key_app_mode
    assert "?1047h" not in after.dump()


def test_the_screen_of_a_new_pane_shows_the_old_lines() -> None:
    output = b"".join(b"\x1b[3%dmrow %d\x1b[0m\r\n" % (n % 8, n) for n in range(4)) + b"$ "
    old = fed_view(output)
    new = fed_view(saved(old))
    assert new.screen_lines()[:4] == old.screen_lines()[:4]


@given(
    st.lists(
        st.one_of(
            st.binary(max_size=40),
            st.sampled_from(
                [
                    b"\x1b[",
                    b"\x1b]",
                    b"\x1bP",
                    b"\x9b",
                    b"\xc2\x9b",
                    b"\x07",
                    b"\x1b\\",
                    b";",
                    b"1",
                    b"?",
                    b"h",
                    b"l",
                    b"m",
                    b"52",
                    b"1049",
                    b"\r\n",
                    b"\x1b(0",
                    b"\xe4\xb8\xad",
                    b"\x1b[6n",
                    b"\x1b[c",
                    b"\x1b[?1h",
                    b"\x1b[?2004h",
                    b"\x1b]0;t\x07",
                ]
            ),
        ),
        max_size=60,
    )
)
def test_whatever_the_program_wrote_the_contents_are_text_and_sgr_only(
    pieces: list[bytes],
) -> None:
    contents = saved(fed_view(b"".join(pieces)))
    text = contents.decode("utf-8")  # always valid UTF-8
    assert ONLY_TEXT_AND_SGR.fullmatch(text), ascii(text)
    fresh = emulated(contents)
    assert not fresh.cursor_key_app_mode
    assert "?1047h" not in fresh.dump()  # still the primary screen
    modes = ModeTracker()
    modes.feed(contents)
    assert not modes.enabled  # no mouse reporting, bracketed paste or focus events


def test_max_lines_and_the_byte_cap_hold() -> None:
    output = b"".join(b"\x1b[32mline %d\x1b[0m\r\n" % n for n in range(500)) + b"$ "
    view = fed_view(output)
    lines = text_lines(saved(view, max_lines=10))
    assert lines == [f"line {n}" for n in range(485, 500)] + ["$"]  # 10 scrolled off + screen
    capped = saved(view, max_bytes=200)
    assert len(capped) <= 200
    assert text_lines(capped)[-1] == "$"  # the newest lines are kept, whole
    assert capped.startswith(b"\x1b[0;32mline ")
    only_screen = text_lines(saved(view, max_lines=0))
    assert only_screen == [f"line {n}" for n in range(495, 500)] + ["$"]


def test_a_history_that_lost_its_beginning_starts_at_a_whole_line() -> None:
    view = PaneView.blank(ROWS, COLS, 64)
    output = b"\x1b[31m" + b"x" * 100 + b"\x1b[0m\r\n" + b"".join(b"l%d\r\n" % n for n in range(9))
    view.scrollback.append(output)
    view.queue_for_emulation(output)
    assert text_lines(saved(view))[0] == "l0"


def test_wide_characters_and_combining_marks_survive() -> None:
    output = "中文 café e\u0301 😀 x\r\n".encode() * 10
    contents = saved(fed_view(output))
    assert text_lines(contents) == ["中文 café é 😀 x"] * 10  # (composed, as on the screen)


def test_c1_controls_held_as_characters_are_not_written_out() -> None:
    contents = saved(fed_view("before\u009b31mafter\u0085".encode()))
    assert "\u009b" not in contents.decode() and "\u0085" not in contents.decode()


def words_of(rows: list[str]) -> list[str]:
    return " ".join(rows).split()


@given(
    st.integers(min_value=10, max_value=100),
    st.lists(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz-./中", min_size=1, max_size=14), max_size=3
    ),
)
def test_the_marker_wraps_at_word_boundaries_and_is_dim(
    cols: int, program_words: list[str]
) -> None:
    program = " ".join(program_words) or "sh"
    marker = restored_marker("2025-03-01 09:30", program, cols)
    assert marker.startswith(b"\x1b[0m\r") and marker.endswith(b"\r\n")
    rows = marker.decode()[len("\x1b[0m\r") :].split("\r\n")[:-1]
    assert all(row.startswith("\x1b[2m") and row.endswith("\x1b[0m") for row in rows)
    texts = [row[len("\x1b[2m") : -len("\x1b[0m")] for row in rows]
    expected = f"── restored 2025-03-01 09:30 · {program} started again ──".split()
    screen = emulated(marker, rows=len(rows) + 2, cols=cols, scrollback=0)
    shown = [line.text.rstrip() for line in screen.view()[: len(rows)]]
    assert shown == texts  # no row wider than the pane: the terminal wrapped nothing
    if all(len(word) * 2 <= cols for word in expected):
        assert words_of(texts) == expected  # no word cut


def test_the_program_in_the_marker_is_escaped() -> None:
    marker = restored_marker("09:30", "evil\x1b]52;c;aGk=\x07", 80)
    assert ONLY_TEXT_AND_SGR.fullmatch(marker.decode()[len("\x1b[0m\r") :])
    assert b"evil\\x1b]52;c;aGk=\\x07" in marker


def test_the_marker_after_a_line_not_ended_starts_on_a_new_one() -> None:
    assert restored_marker("09:30", "sh", 80, at_line_start=False).startswith(b"\x1b[0m\r\n")


def test_a_notice_is_wrapped_at_word_boundaries_to_the_pane() -> None:
    text = "mux: restored from the snapshot of 2025-03-01 09:30: a new process\r\nmux: more"
    line = notice_line(text, 20)
    view = fed_view(line, rows=8, cols=20)
    shown = [row for row in view.screen_lines() if row]
    assert shown == wrap_words(text, 20)
    assert words_of(shown) == text.split()
    assert notice_line(text) == b"\x1b[2m" + text.encode() + b"\x1b[0m\r\n"  # unwrapped


def test_only_a_word_longer_than_the_row_is_cut() -> None:
    assert wrap_words("a " + "x" * 25, 10) == ["a " + "x" * 8, "x" * 10, "x" * 7]
    assert wrap_words("中文中文中文", 5) == ["中文", "中文", "中文"]  # by cells, not characters


def reference_contents_of(
    history: bytes,
    screen_dump: str,
    rows: int,
    cols: int,
    *,
    max_lines: int,
    max_bytes: int,
    history_cut: bool = False,
) -> bytes:
    """`contents_of` as it was made before it read avt's dump: each row from its cells."""
    screen = Vt(cols, rows, scrollback_limit=0)
    screen.feed_str(screen_dump)
    alternate = "\x9b?1047h" in screen_dump or "\x1b[?1047h" in screen_dump
    earlier: list[Line] = []
    if max_lines > 0 and history:
        if history_cut:
            history = history[history.find(b"\n") + 1 :] if b"\n" in history else b""
        scratch = Vt(cols, rows, scrollback_limit=max_lines)
        text = codecs.decode(history, "utf-8", errors="replace")
        scratch.feed_str(composed(GraphicsTranslator().translate(text)) + "\x1b[?1049l")
        earlier = scratch.lines()
        if not alternate:
            earlier = earlier[: len(earlier) - rows]
        else:
            while earlier and not row_text(earlier[-1], keep_trailing_blanks=False):
                earlier.pop()
            earlier = earlier[-max_lines:]
    if alternate:
        lines = [*_reference_lines(earlier), *_reference_lines(screen.view())]
    else:
        lines = list(_reference_lines([*earlier, *screen.view()]))
    while lines and not lines[-1]:
        lines.pop()
    kept: list[bytes] = []
    for line in reversed(lines):
        encoded = line.encode("utf-8", errors="replace") + b"\r\n"
        if sum(map(len, kept)) + len(encoded) > max_bytes:
            break
        kept.append(encoded)
    return b"".join(reversed(kept))


def _reference_lines(rows: Iterable[Line]) -> Iterator[str]:
    unwrapper = TextUnwrapper()
    parts: list[str] = []
    for row in rows:
        wrapped = unwrapper.push(row) is None
        parts.append(row_text(row, keep_trailing_blanks=wrapped))
        if not wrapped:
            yield "".join(parts)
            parts = []
    if parts:
        yield "".join(parts)


_SGR_PARAMS = st.lists(
    st.sampled_from(
        [
            *("0", "1", "2", "3", "4", "5", "7", "9", "22", "24", "27", "31", "39", "42", "49"),
            *("94", "103", "38;5;4", "38;5;202", "48;5;13", "38;2;1;2;3", "48;2;200;0;9"),
            *("38:5:77", "48:2::5:6:7"),
        ]
    ),
    max_size=3,
).map(lambda params: "\x1b[" + ";".join(params) + "m")
# Text (runs avt writes with REP, wide characters, combining marks, C1 controls), colours
# and attributes, visible and invisible blanks, and what moves, erases, scrolls, wraps or
# switches screens.
_OUTPUT_PIECES = st.one_of(
    st.text(alphabet="ab :m0 ", min_size=1, max_size=12),
    _SGR_PARAMS,
    st.sampled_from(
        [
            *("\r\n", "\n", "\r", "\t", "\b", " " * 9, "x" * 8, "中", "中文", "😀", "e\u0301", "é"),
            *("\u0085", "\u009b", "\x1b[K", "\x1b[2J", "\x1b[H", "\x1b[3;2H", "\x1b[2A"),
            *("\x1b[?1049h", "\x1b[?1049l", "\x1b[?1047h", "\x1b7", "\x1b8", "\x1bH"),
            *("\x1b[3g", "\x1b[2;4r", "\x1b[?6h", "\x1b[?7l", "\x1b[?7h", "\x1b[4h", "\x1b[3b"),
            *("\x1b[2@", "\x1b[3P", "\x1b[2X", "\x1b(0q", "\x1b(B", "\x1b[?25l", "\x1b[L"),
            *("\x1b[41m   \x1b[0m  ", "\x1b[7m  \x1b[1m  ", "\x1b[4m ", "\x1b[9m  \x1b[0m"),
        ]
    ),
)
# (rows, cols, max_lines, max_bytes, the history ring's bytes: small ones lose the start)
_SHAPES = st.tuples(
    st.integers(min_value=1, max_value=7),
    st.integers(min_value=2, max_value=12),
    st.integers(min_value=0, max_value=30),
    st.integers(min_value=0, max_value=1200),
    st.sampled_from([48, 200, 1 << 20]),
)


@settings(max_examples=400)
@given(st.lists(_OUTPUT_PIECES, max_size=50), _SHAPES)
@example(["\x1b[41m", "ab", "\x1b[0m", " " * 20, "\r\n"] * 3, (3, 8, 10, 1 << 20, 1 << 20))
@example(["中文" * 9, "\x1b[?1049h", "\x1b[7mvim\r\n"], (4, 5, 3, 1 << 20, 1 << 20))
@example(["\x1b[1m", "\x1b[2J"], (2, 2, 0, 12, 48))
def test_the_contents_are_what_reading_each_cell_made(
    pieces: list[str], shape: tuple[int, int, int, int, int]
) -> None:
    rows, cols, max_lines, max_bytes, ring = shape
    data = "".join(pieces).encode()
    view = PaneView.blank(rows, cols, ring)
    view.scrollback.append(data)
    view.queue_for_emulation(data)
    dump, _ = view.dump_screen()
    history = view.scrollback.contents()
    cut = view.scrollback.total > len(history)
    arguments = (history, dump, rows, cols)
    assert contents_of(
        *arguments, max_lines=max_lines, max_bytes=max_bytes, history_cut=cut
    ) == reference_contents_of(
        *arguments, max_lines=max_lines, max_bytes=max_bytes, history_cut=cut
    )
