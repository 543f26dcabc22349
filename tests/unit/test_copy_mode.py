"""Copy mode (muxctl.copy_mode, copy_view, key_reader): keys in, the view and the text
copied out, as tmux's copy mode behaves."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mux.protocol import attach as proto
from muxctl import copy_view
from muxctl.clipboard import clipboard_sequence, paste_frame
from muxctl.copy_mode import Copied, CopyMode, Ended
from muxctl.key_reader import KeyReader

LINES = [f"line {n}" for n in range(1, 101)]  # 100 lines: 76 of history, 24 of screen


def plain(form: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", form)


def keys(text: str) -> list[str]:
    return KeyReader().feed(text.encode())


def test_the_key_reader_names_what_a_terminal_sends() -> None:
    reader = KeyReader()
    assert reader.feed(b"\x1b[A\x1bOB\x1b[5~\x1b[6~\x1b[H\x1b[4~") == [
        "Up", "Down", "PageUp", "PageDown", "Home", "End"
    ]  # fmt: skip
    assert reader.feed(b"\x15\x04\x00\r\x7f\x1bw\x1b<\x1b") == [
        "C-u", "C-d", "C-Space", "Enter", "BSpace", "M-w", "M-<", "Escape"
    ]  # fmt: skip
    assert reader.feed("é/€".encode()[:3]) == ["é", "/"]
    assert reader.feed("€".encode()) == ["€"]  # the cut character, whole
    assert reader.feed(b"\x1b[200~") == []  # a sequence no key is named for


@given(st.binary(max_size=64))
def test_the_key_reader_takes_any_bytes(data: bytes) -> None:
    for key in KeyReader().feed(data):
        assert key and isinstance(key, str)


def test_it_starts_at_the_last_output_showing_the_screen() -> None:
    mode = CopyMode([*LINES, "", ""], rows=24, cols=40, mode_keys="vi")
    assert mode.cursor == (99, 0)
    drawn = [plain(row) for row in copy_view.rows(mode)]
    assert drawn[-3].startswith("line 100") and not drawn[-1].strip()  # the screen as it is
    assert drawn[0].endswith("[0/78]")  # (102 lines, 24 shown)
    assert copy_view.cursor(mode) == (21, 0)


def test_page_up_reaches_lines_the_terminal_never_showed() -> None:
    mode = CopyMode(LINES, rows=24, cols=40, mode_keys="emacs")
    mode.feed(["PageUp"] * 3)
    assert mode.top == 4
    mode.feed(["PageUp"])
    assert mode.top == 0
    assert plain(copy_view.rows(mode)[0]).startswith("line 1 ")
    assert plain(copy_view.rows(mode)[0]).endswith("[76/76]")


@pytest.mark.parametrize(
    ("mode_keys", "search", "again", "back"),
    [("vi", "/", "n", "N"), ("emacs", "C-s", "n", "N")],
)
def test_search_forwards_backwards_and_again(
    mode_keys: str, search: str, again: str, back: str
) -> None:
    mode = CopyMode(LINES, rows=10, cols=40, mode_keys=mode_keys)  # type: ignore[arg-type]
    start = ["g"] if mode_keys == "vi" else ["M-<"]
    mode.feed([*start, search, *"line 5", "Enter"])
    assert mode.cursor == (4, 0)
    mode.feed([again])
    assert mode.cursor == (49, 0)  # "line 50"
    mode.feed([back])
    assert mode.cursor == (4, 0)
    assert MATCH_STYLE in copy_view.rows(mode)[mode.cursor[0] - mode.top]


MATCH_STYLE = copy_view.MATCH


def test_search_backwards_wraps_and_says_when_nothing_matches() -> None:
    mode = CopyMode(LINES, rows=10, cols=40, mode_keys="vi")
    mode.feed(["?", *"LINE 1", "Enter"])  # upper case: matches case exactly
    assert "not found: LINE 1" in plain(copy_view.rows(mode)[0])
    mode.feed(["?", *"line 100", "Enter"])
    assert mode.cursor == (99, 0)  # round the top, to the end
    mode.feed(["?", *"x", "BSpace", *"ine 9", "Escape"])  # given up: nothing moves
    assert mode.cursor == (99, 0) and mode.prompt is None


def test_a_search_being_typed_shows_on_the_bottom_row_with_the_cursor() -> None:
    mode = CopyMode(LINES, rows=10, cols=40, mode_keys="vi")
    mode.feed(["/", *"abc"])
    assert plain(copy_view.rows(mode)[-1]).startswith("(search down) abc")
    assert copy_view.cursor(mode) == (9, len("(search down) abc"))


def test_vi_selection_across_lines_is_copied_as_shown() -> None:
    mode = CopyMode(["first line", "second line", "third"], rows=5, cols=20, mode_keys="vi")
    mode.feed(["g", "w", "v", "j", "$"])
    rows = copy_view.rows(mode)
    assert copy_view.SELECTED + "line" in rows[0]
    assert mode.feed(["y"]) == Copied("line\nsecond line")


def test_emacs_selection_and_cancel() -> None:
    mode = CopyMode(["alpha beta"], rows=3, cols=20, mode_keys="emacs")
    mode.feed(["C-a", "M-f", "C-Space", "C-e"])
    assert mode.feed(["M-w"]) == Copied("beta")
    mode = CopyMode(["alpha"], rows=3, cols=20, mode_keys="emacs")
    mode.feed(["C-Space", "Right"])
    assert mode.feed(["C-g"]) is None and mode.anchor is None  # the selection cleared first
    assert mode.feed(["C-g"]) == Ended()


def test_q_and_enter_without_a_selection_end_it() -> None:
    assert CopyMode(LINES, 5, 20, "vi").feed(["q"]) == Ended()
    assert CopyMode(LINES, 5, 20, "vi").feed(["Enter"]) == Ended()


def test_text_from_panes_is_shown_escaped_and_wide_characters_fit() -> None:
    rows = copy_view.rows(CopyMode(["\x1b]52;c;AAAA\x07 evil", ""], 3, 40, "vi"))
    assert "\x1b]" not in "".join(rows) and "\x07" not in "".join(rows)
    assert plain(rows[0]).startswith("\\x1b]52;c;AAAA\\x07 evil")
    mode = CopyMode(["", "日本語テキスト"], 3, 9, "vi")
    assert plain(copy_view.rows(mode)[1]) == "日本語テ "  # 8 columns of wide ones, a space
    mode.feed(["j", "$"])
    assert copy_view.cursor(mode) == (1, 8)  # (the last column: the line is wider)


def test_the_last_row_leaves_the_terminal_corner_out() -> None:
    mode = CopyMode(["x" * 30], 2, 10, "vi")
    assert len(plain(copy_view.rows(mode, corner=True)[-1])) == 9
    assert len(plain(copy_view.rows(mode)[-1])) == 10


def test_osc_52_and_the_paste_frame() -> None:
    assert clipboard_sequence("hé") == b"\x1b]52;c;aMOp\x07"
    assert paste_frame("a\nb", service_takes_paste=True) == proto.Paste(b"a\nb")
    assert paste_frame("a\nb", service_takes_paste=False) == proto.Input(b"a\rb")


@given(
    st.lists(st.text(max_size=30), max_size=40),
    st.lists(st.sampled_from(["j", "k", "h", "l", "w", "b", "G", "g", "C-u", "C-d", "v", "$", "0",
                              "PageUp", "PageDown", "n", "/", "a", "Enter", "H", "L", "M"]),
             max_size=40),
    st.integers(1, 30),
    st.integers(2, 60),
)  # fmt: skip
def test_any_keys_keep_the_view_whole(
    lines: list[str], typed: list[str], rows: int, cols: int
) -> None:
    mode = CopyMode(lines, rows, cols, "vi")
    mode.feed(typed)
    drawn = copy_view.rows(mode)
    assert len(drawn) == mode.rows
    for form in drawn:
        assert "\n" not in form and "\r" not in form
    row, col = copy_view.cursor(mode)
    assert 0 <= row < mode.rows and 0 <= col < mode.cols


def test_the_wheel_scrolls_the_view_and_the_cursor_with_it() -> None:
    mode = CopyMode(LINES, rows=24, cols=40, mode_keys="vi")
    assert mode.top == 76
    mode.scroll(-5)
    assert mode.top == 71 and mode.cursor[0] == 94
    mode.scroll(-500)
    assert mode.top == 0
    mode.scroll(500)
    assert mode.top == mode.bottom_top
