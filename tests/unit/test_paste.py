"""mux.protocol.paste: pasted text as the program reads it."""

from hypothesis import given
from hypothesis import strategies as st

from mux.protocol.paste import BRACKET_CLOSE, BRACKET_OPEN, pasted


def test_newlines_become_enter_and_the_bracket_is_added_when_asked() -> None:
    assert pasted(b"a\nb\r\nc", bracketed=False) == b"a\rb\rc"
    assert pasted(b"echo hi\n", bracketed=True) == b"\x1b[200~echo hi\r\x1b[201~"
    assert pasted(b"", bracketed=True) == b""  # nothing pasted: no empty bracket


def test_controls_that_would_end_the_bracket_or_drive_the_program_are_taken_out() -> None:
    hostile = b"ls\x1b[201~; rm -rf ~\x07\x9b\xc2\x9b\x7f\tend"
    assert (
        pasted(hostile, bracketed=True)
        == BRACKET_OPEN + b"ls[201~; rm -rf ~\xef\xbf\xbd\tend" + BRACKET_CLOSE
    )


@given(st.binary(max_size=200), st.booleans())
def test_the_text_between_the_brackets_never_holds_an_escape(data: bytes, bracketed: bool) -> None:
    out = pasted(data, bracketed)
    body = out.removeprefix(BRACKET_OPEN).removesuffix(BRACKET_CLOSE) if bracketed else out
    assert b"\x1b" not in body
    assert b"\n" not in body
    body.decode()  # UTF-8 whatever came in
