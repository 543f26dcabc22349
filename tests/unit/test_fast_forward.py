"""A flood's plain text skipped by the emulator leaves the same screen as emulating it
(mux.terminal.fast_forward): the screen, the cursor, the pen, the modes, and the lines
kept above the screen (seen again after a resize)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mux.terminal import fast_forward
from mux.terminal.fast_forward import MIN_SKIP_CHARS, ends_in_ground, skippable
from mux.terminal.screen import Screen
from tests.splits import pieces as cut_into

ROWS, COLS = 6, 30


def _lines(count: int, start: int = 0, width: int = 12) -> str:
    return "".join(f"line {i} " + "x" * (i % width) + "\r\n" for i in range(start, start + count))


FLOOD = _lines(1200)


def test_plain_text_followed_by_enough_lines_is_skippable() -> None:
    skip = skippable(FLOOD, 20, 5, ground_before=True)
    assert skip is not None
    start, end = skip
    assert start == 0
    assert FLOOD[end:].count("\n") == 25 and FLOOD[end - 1] == "\n"


def test_what_comes_after_the_last_sequence_is_skipped_not_the_sequence() -> None:
    text = "\x1b[31mred" + FLOOD
    start, _ = skippable(text, 20, 5, ground_before=True) or (None, None)
    assert start == len("\x1b[31m")
    # a sequence after the lines that push the skipped part away: it could stop them
    assert skippable(FLOOD + "\x1b[2;4r" + _lines(30), 20, 5, ground_before=True) is None


@pytest.mark.parametrize(
    "opening",
    ["\x1b[3;", "\x1b]0;a title not ended ", "\x1bP1$q", "\x1b[1\n2"],
    ids=["CSI", "OSC", "DCS", "CSI with a C0 inside"],
)
def test_text_after_a_sequence_not_known_to_be_over_is_not_skipped(opening: str) -> None:
    # (digits: nothing in them ends a CSI)
    assert skippable(opening + "1234\r\n" * 3000, 20, 5, ground_before=True) is None


def test_a_batch_after_one_that_ended_inside_a_sequence_is_not_skipped() -> None:
    assert not ends_in_ground("text \x1b[1;3", before=True)
    assert skippable(FLOOD, 20, 5, ground_before=False) is None
    assert ends_in_ground("\x1b]0;title\x07 and text", before=False)
    assert ends_in_ground("\x1b]0;title\x1b\\ and text", before=False)
    assert ends_in_ground("no sequence at all", before=True)


def test_too_few_lines_or_too_little_text_is_emulated() -> None:
    assert skippable(_lines(10), 20, 5, ground_before=True) is None
    assert skippable("x" * (MIN_SKIP_CHARS * 3), 2, 0, ground_before=True) is None
    # a screenful of line feeds in it, or the rows below the cursor could keep some of it
    few = "x" * MIN_SKIP_CHARS + "\r\n" * 19 + _lines(25)
    assert skippable(few, 20, 5, ground_before=True) is None


def _state(screen: Screen) -> tuple[str, list[str], list[str]]:
    dump, _ = screen.dump_state()
    before_resize = screen.lines()
    screen.resize(ROWS * 2, COLS - 7)  # the kept lines come back into view
    screen.resize(ROWS * 3, COLS)
    return dump, before_resize, screen.lines()


PIECES = st.sampled_from(
    [
        FLOOD,
        _lines(400, 5000, 40),  # long lines: wrapped
        "1234\r\n" * 3000,  # digits only
        "\x1b[31m",
        "\x1b[0m",
        "\x1b[2;4r",  # a scroll region
        "\x1b[r",
        "\x1b[5;3H",
        "\x1b[?1049h",
        "\x1b[?1049l",
        "\x1b[?6h",
        "\x1b[?6l",
        "\x1b[4h",
        "\x1b[4l",
        "\x1b(0lqk\x1b(B",
        "\x0e",
        "\x0f",
        "\x1b]0;title\x07",
        "\x1b[",  # a sequence left open, ended by the next piece or not
        "\x1bH",  # a tab stop
        "\ttab\tbed\r\n",
        "wide 漢字 and e\u0301\r\n",
        "no newline at the end",
        "\r",
        "\n",
        "\b\b",
        "y" * 9000,  # one long line, wrapped
        "\x1b[20h",  # a line feed also returns
        "\x1b[20l",
        "\x1b[?7l",  # no wrapping
        "\x1b[?7h",
        "\x1b[3J",
        "\x1b[2J",
        "\x9b2;5H",  # C1 controls: a CSI, a tab stop, a next line
        "\x88",
        "\x85",
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=8), st.lists(st.integers(0, 10**6), max_size=6))
def test_skipping_leaves_the_same_screen_as_emulating_everything(
    pieces: list[str], cuts: list[int]
) -> None:
    batches = cut_into("".join(pieces).encode(), cuts)

    fast = Screen(ROWS, COLS)
    for batch in batches:
        fast.feed(batch)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast_forward, "MIN_SKIP_CHARS", 10**9)
        slow = Screen(ROWS, COLS)
        for batch in batches:
            slow.feed(batch)
    assert _state(fast) == _state(slow)


def test_a_flood_is_emulated_in_part() -> None:
    fed: list[int] = []
    screen = Screen(ROWS, COLS)
    emulate = Screen._emulate

    def counted(self: Screen, text: str) -> None:
        fed.append(len(text))
        emulate(self, text)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Screen, "_emulate", counted)
        screen.feed(FLOOD.encode())
    assert sum(fed) < len(FLOOD) // 10
    assert screen.lines()[-2] == "line 1199 " + "x" * (1199 % 12)
