"""The modes a repaint sets again: mouse reporting, bracketed paste, focus events."""

from mux.protocol.modes import TRACKED, ModeTracker


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
    assert sequence.count(b"\x1b[?") == len(TRACKED)


def test_a_mode_number_of_thousands_of_digits_is_no_mode() -> None:
    """int() of it would raise (Python's digit limit); it is ignored, and what follows counts."""
    modes = ModeTracker()
    modes.feed(b"\x1b[?" + b"9" * 5000 + b"h\x1b[?2004h")
    assert modes.enabled == {2004}
