"""The window view's keys (muxctl.prefix_keys): typed keys, the detach key, commands
behind the prefix key, however the bytes are split across reads."""

import pytest

from muxctl.prefix_keys import (
    PASTE_PIECE_BYTES,
    Command,
    DetachNow,
    KeyEvent,
    Pasted,
    PrefixKeys,
    Typed,
    key_label,
)

PREFIX, DETACH = b"\x02", b"\x1c"


def keys() -> PrefixKeys:
    return PrefixKeys(PREFIX, DETACH)


def test_keys_without_the_prefix_are_typed_as_they_come() -> None:
    assert keys().feed(b"ls -l\r") == [Typed(b"ls -l\r")]


@pytest.mark.parametrize(
    ("after", "command"),
    [
        (b"%", "split-horizontal"),
        (b'"', "split-vertical"),
        (b"x", "close"),
        (b"z", "zoom"),
        (b"d", "detach"),
        (b"o", "next-pane"),
        (b";", "last-pane"),
        (b"?", "list-keys"),
        (b"\x1b[A", "up"),
        (b"\x1b[B", "down"),
        (b"\x1b[C", "right"),
        (b"\x1bOD", "left"),
    ],
)
def test_a_key_after_the_prefix_is_a_command(after: bytes, command: str) -> None:
    assert keys().feed(b"ab" + PREFIX + after + b"cd") == [
        Typed(b"ab"),
        Command(command),
        Typed(b"cd"),
    ]


def test_a_command_split_across_reads_is_still_one_command() -> None:
    parser = keys()
    events: list[KeyEvent] = []
    for byte in PREFIX + b"\x1b[D" + b"q":
        events += parser.feed(bytes([byte]))
    assert events == [Command("left"), Typed(b"q")]


def test_the_prefix_twice_types_it_and_an_unbound_key_is_ignored() -> None:
    assert keys().feed(PREFIX + PREFIX + PREFIX + b"Q" + PREFIX + b"\x1b[6~" + b"k") == [
        Typed(PREFIX),
        Typed(b"k"),
    ], "Q and PageDown (its whole sequence) have no binding"


def test_the_detach_key_detaches_at_once_and_nothing_after_it_is_typed() -> None:
    assert keys().feed(b"abc" + DETACH + b"def") == [Typed(b"abc"), DetachNow()]


def test_no_prefix_key_types_every_key() -> None:
    assert PrefixKeys(None, DETACH).feed(PREFIX + b"%") == [Typed(PREFIX + b"%")]


def test_the_detach_key_after_the_prefix_still_detaches_at_once() -> None:
    assert keys().feed(PREFIX + DETACH + b"zz") == [DetachNow()]


def test_an_escape_after_the_prefix_is_dropped_and_the_next_key_typed() -> None:
    assert keys().feed(PREFIX + b"\x1bx") == [Typed(b"x")]


def test_page_up_and_brackets_after_the_prefix_are_copy_mode_and_paste() -> None:
    assert keys().feed(PREFIX + b"\x1b[5~" + PREFIX + b"[" + PREFIX + b"]") == [
        Command("copy-mode-page-up"),
        Command("copy-mode"),
        Command("paste"),
    ]


def test_the_keys_are_listed_as_bound_with_what_each_does() -> None:
    """`?`: a line a key bound now (`[keys]` applied), then the keys that are no
    character, the prefix typed twice and the detach key."""
    listed = PrefixKeys(b"\x01", DETACH, {b"|": "split-horizontal", b"o": "next-pane"}).listed()
    assert listed[:2] == [
        "C-a o        next-pane        the focus to the next pane of the window",
        "C-a |        split-horizontal split the focused pane side by side",
    ]
    assert "C-a PageUp   copy mode, a page up" in listed
    assert listed[-2:] == [
        "C-a C-a      type C-a",
        "C-\\          detach at once (no prefix before it)",
    ]
    assert not any("%" in line for line in listed), "only what is bound"


def test_key_labels_are_tmuxs() -> None:
    assert [key_label(k) for k in (b"\x02", b"\x1c", b"\x7f", b"`")] == ["C-b", "C-\\", "C-?", "`"]


def test_a_bracketed_paste_is_text_its_prefix_and_detach_keys_too() -> None:
    """What the terminal brackets as pasted is one paste, however the reads cut it (the
    end marker too); a prefix or detach key inside it is text, as in tmux."""
    paste = b"\x1b[200~echo a" + PREFIX + b"%" + DETACH + b"\n\x1b[201~"
    stream = b"ls" + paste + PREFIX + b"z"
    for cut in range(1, len(stream)):
        if 2 < cut < 8:  # the start marker itself cut: keys (no timer to wait for the rest)
            continue
        parser = keys()
        events = parser.feed(stream[:cut]) + parser.feed(stream[cut:])
        pasted = b"".join(e.data for e in events if isinstance(e, Pasted))
        typed = b"".join(e.data for e in events if isinstance(e, Typed))
        assert pasted == b"echo a" + PREFIX + b"%" + DETACH + b"\n", cut
        assert typed == b"ls", cut
        assert events[-1] == Command("zoom"), cut


def test_a_long_paste_is_given_on_in_pieces_cut_between_characters() -> None:
    parser = keys()
    half = "é" * (PASTE_PIECE_BYTES // 4)  # two bytes each: half a piece
    text = half + half + "x" + half + half
    events = parser.feed(b"\x1b[200~" + text.encode())
    sizes = [len(e.data) for e in events if isinstance(e, Pasted)]
    assert sizes == [PASTE_PIECE_BYTES, PASTE_PIECE_BYTES - 1], "no é cut in two"
    events += parser.feed(b"\x1b[201")
    events += parser.feed(b"~x")
    pieces = [e.data for e in events if isinstance(e, Pasted)]
    assert b"".join(pieces).decode() == text and events[-1] == Typed(b"x")


def test_keys_after_a_command_that_hands_the_terminal_on_are_kept_for_what_reads_next() -> None:
    """A lone pane's `:` (or `x`, `[`...) ends its attach: what was typed after it in the
    same read is the prompt's (the question's, copy mode's), not lost with the attach."""
    parser = keys()
    until = {"command-prompt", "close"}
    assert parser.feed(b"ab" + PREFIX + b":kill-pane\r", until=until) == [
        Typed(b"ab"),
        Command("command-prompt"),
    ]
    assert parser.take_ahead() == b"kill-pane\r"
    assert parser.take_ahead() == b"", "taken once"
    # Commands not named go on as before; what a question left is given back.
    assert parser.feed(PREFIX + b"z" + PREFIX + b"xy", until=until) == [
        Command("zoom"),
        Command("close"),
    ]
    parser.give_back(parser.take_ahead()[1:])
    assert parser.take_ahead() == b""
    parser.give_back(b"ls\r")
    assert parser.take_ahead() == b"ls\r"
