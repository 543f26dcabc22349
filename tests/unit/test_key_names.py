"""Key names for `muxctl send --keys` (muxctl.key_names): the bytes an xterm sends.
tests/integration/test_key_names_vs_tmux.py checks the same names against tmux's
send-keys."""

import pytest

from muxctl.key_names import NAMED_KEYS, control_byte, key_bytes

XTERM = {
    "Enter": b"\r",
    "Escape": b"\x1b",
    "Tab": b"\t",
    "BTab": b"\x1b[Z",
    "S-Tab": b"\x1b[Z",
    "Space": b" ",
    "BSpace": b"\x7f",
    "Up": b"\x1b[A",
    "down": b"\x1b[B",  # letter case is ignored, as tmux ignores it
    "Right": b"\x1b[C",
    "Left": b"\x1b[D",
    "C-Up": b"\x1b[1;5A",
    "S-Up": b"\x1b[1;2A",
    "M-Up": b"\x1b[1;3A",
    "C-M-S-Left": b"\x1b[1;8D",
    "Home": b"\x1b[H",  # xterm's, in its normal cursor mode (tmux sends ESC [ 1 ~)
    "End": b"\x1b[F",
    "C-Home": b"\x1b[1;5H",
    "PageUp": b"\x1b[5~",
    "PgDn": b"\x1b[6~",
    "NPage": b"\x1b[6~",
    "IC": b"\x1b[2~",
    "Delete": b"\x1b[3~",
    "F1": b"\x1bOP",
    "F4": b"\x1bOS",
    "S-F1": b"\x1b[1;2P",
    "F5": b"\x1b[15~",
    "C-F5": b"\x1b[15;5~",
    "F12": b"\x1b[24~",
    "C-c": b"\x03",
    "C-C": b"\x03",
    "C-Space": b"\x00",
    "C-@": b"\x00",
    "C-[": b"\x1b",
    "C-?": b"\x7f",
    "M-x": b"\x1bx",
    "M-C-x": b"\x1b\x18",
    "C-M-x": b"\x1b\x18",
    "S-a": b"A",
    "M-Enter": b"\x1b\r",
    "a": b"a",
    "-": b"-",
    "M--": b"\x1b-",
    "é": "é".encode(),
}


@pytest.mark.parametrize(("name", "sent"), XTERM.items(), ids=list(XTERM))
def test_each_name_is_what_an_xterm_sends(name: str, sent: bytes) -> None:
    assert key_bytes(name) == sent


@pytest.mark.parametrize("word", ["hello", "C-", "C-é", "X-y", "", "F13", "M-Nothing"])
def test_a_word_that_names_no_key_is_none(word: str) -> None:
    """(muxctl then types it as text, as tmux does.)"""
    assert key_bytes(word) is None


def test_every_named_key_has_bytes_with_and_without_modifiers() -> None:
    for name in NAMED_KEYS:
        for modifiers in ("", "C-", "M-", "S-", "C-M-S-"):
            data = key_bytes(modifiers + name)
            assert data, modifiers + name


def test_control_bytes() -> None:
    assert [control_byte(c) for c in "a@[\\]^_? "] == [
        b"\x01",
        b"\x00",
        b"\x1b",
        b"\x1c",
        b"\x1d",
        b"\x1e",
        b"\x1f",
        b"\x7f",
        b"\x00",
    ]
    assert control_byte("1") is None and control_byte("é") is None
