"""The modes a repaint sets again: mouse reporting, bracketed paste, focus events, the
application keypad."""

from mux.protocol.modes import KEYPAD, TRACKED, ModeTracker


def test_set_and_reset_combined_and_alone() -> None:
    modes = ModeTracker()
    modes.feed(b"\x1b[?1000;1006h text \x1b[?2004h\x1b[?25l\x1b[?1049h")
    assert modes.enabled == {1000, 1006, 2004}  # cursor and alternate screen are the emulator's
    modes.feed(b"\x1b[?1000l\x1b[?1006;2004l")
    assert modes.enabled == set()


def test_the_sequence_sets_every_tracked_mode_either_way() -> None:
    modes = ModeTracker(frozenset({1002, 2004}))
    sequence = modes.sequence()
    assert b"\x1b[?1002h" in sequence and b"\x1b[?2004h" in sequence
    assert b"\x1b[?1000l" in sequence and b"\x1b[?1004l" in sequence
    assert sequence.count(b"\x1b[?") == len(TRACKED) - 1  # (the keypad: ESC > here)
    assert sequence.endswith(b"\x1b[?1002h\x1b[?2004h"), "set after every reset"


def test_the_keypad_is_set_with_esc_equals_and_reset_with_esc_greater() -> None:
    modes = ModeTracker()
    modes.feed(b"\x1b[?1h\x1b=")
    assert modes.enabled == {KEYPAD} and modes.sequence().endswith(b"\x1b=")
    modes.feed(b"\x1b= then \x1b>")
    assert modes.enabled == set() and b"\x1b>" in modes.sequence()


def test_a_mode_number_of_thousands_of_digits_is_no_mode() -> None:
    """int() of it would raise (Python's digit limit); it is ignored, and what follows counts."""
    modes = ModeTracker()
    modes.feed(b"\x1b[?" + b"9" * 5000 + b"h\x1b[?2004h")
    assert modes.enabled == {2004}
