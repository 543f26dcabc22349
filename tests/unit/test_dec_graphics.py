"""DEC special graphics with xterm's glyphs (issue #32): `` ` `` is ◆ (U+25C6) and `~`
is · (U+00B7), as xterm shows them, where avt alone draws ♦ (U+2666) and ⋅ (U+22C5).
tmux is no referee here: `capture-pane -p` gives back the ASCII a program printed
(`` `~aqx ``), not what a terminal shows, so the right answer is written out: xterm's
(its charsets.c) and the VT100's own glyphs."""

from hypothesis import given
from hypothesis import strategies as st

from mux.protocol.dec_graphics import GraphicsTranslator
from mux.terminal.screen import Screen

G0_GRAPHICS, G0_ASCII, G1_GRAPHICS, SO, SI = "\x1b(0", "\x1b(B", "\x1b)0", "\x0e", "\x0f"


def shown(text: str, cols: int = 40) -> str:
    screen = Screen(rows=3, cols=cols)
    screen.feed(text.encode())
    return screen.lines()[0]


def test_xterms_glyphs_through_g0_and_through_g1_shifted_in() -> None:
    assert shown(f"{G0_GRAPHICS}`~aqx{G0_ASCII}`~") == "◆·▒─│`~"
    assert shown(f"{G1_GRAPHICS}`~{SO}`~lqk{SI}`~") == "`~◆·┌─┐`~"
    assert shown(f"{SO}`~{SI}") == "`~", "SO without G1 designated graphics: ASCII"


def test_what_is_inside_sequences_and_strings_is_left_alone() -> None:
    # CSI 5 ` is HPA (to column 5), a title may hold a backquote, a reset ends it all.
    assert shown(f"{G0_GRAPHICS}qqqqqq\x1b[3`~") == "qq·qqq".replace("q", "─")
    screen = Screen(rows=3, cols=40)
    screen.feed(f"{G0_GRAPHICS}\x1b]2;a`b~\x07`".encode())
    assert screen.lines()[0] == "◆"
    assert shown(f"{G0_GRAPHICS}`\x1bc`") == "`", "RIS resets the character sets"
    # DECRC puts back the cursor (over the backquote) and the character sets saved.
    assert shown(f"{G0_GRAPHICS}\x1b7{G0_ASCII}`\x1b8`") == "◆", "DECSC/DECRC keep them"


def test_a_literal_diamond_stays_what_it_is() -> None:
    assert shown("♦⋅ ◆·") == "♦⋅ ◆·"


@given(
    st.lists(
        st.sampled_from(
            [
                G0_GRAPHICS,
                G0_ASCII,
                G1_GRAPHICS,
                SO,
                SI,
                "`",
                "~",
                "q",
                "x",
                "ab",
                "\x1b[2`",
                "\x1b]0;t`~\x07",
                "\x1b7",
                "\x1b8",
                "\x1bc",
                "é",
            ]
        ),
        max_size=30,
    ),
    st.lists(st.integers(min_value=0, max_value=400), max_size=6),
)
def test_any_split_of_the_output_gives_the_same_text(pieces: list[str], cuts: list[int]) -> None:
    text = "".join(pieces)
    whole = GraphicsTranslator().translate(text)
    translator, out, last = GraphicsTranslator(), [], 0
    for cut in sorted(c % (len(text) + 1) for c in cuts):
        out.append(translator.translate(text[last:cut]))
        last = cut
    out.append(translator.translate(text[last:]))
    assert "".join(out) == whole


def test_an_unended_string_is_not_held_back_without_bound() -> None:
    translator = GraphicsTranslator()
    assert translator.translate("\x1b]2;" + "t" * 10_000) == "\x1b]2;" + "t" * 10_000
