"""The mouse in the window view (muxctl.mouse): reports read out of what the terminal
sends, and encoded again for a program as a terminal of its own would."""

from hypothesis import given
from hypothesis import strategies as st

from mux.protocol.modes import ScreenModes
from muxctl.mouse import MouseEvent, MouseReader, for_program


def modes(*enabled: int) -> ScreenModes:
    return ScreenModes(frozenset(enabled))


def test_reports_are_taken_out_of_typed_bytes() -> None:
    reader = MouseReader()
    out = reader.feed(b"ab\x1b[<0;10;5Mcd\x1b[<0;10;5m\x1b[A")
    assert out == [
        b"ab",
        MouseEvent(0, 4, 9),
        b"cd",
        MouseEvent(0, 4, 9, release=True),
        b"\x1b[A",
    ]
    assert reader.feed(b"plain") == [b"plain"]


def test_a_report_cut_between_reads_is_completed() -> None:
    reader = MouseReader()
    assert reader.feed(b"x\x1b[<64;3") == [b"x"]
    assert reader.feed(b";2M") == [MouseEvent(64, 1, 2)]
    # A lone Escape, or Alt-[, is a key: never held back.
    assert reader.feed(b"\x1b") == [b"\x1b"]
    assert reader.feed(b"\x1b[") == [b"\x1b["]


@given(
    st.lists(
        st.binary(max_size=20)
        | st.builds(
            MouseEvent, st.integers(0, 127), st.integers(0, 300), st.integers(0, 300), st.booleans()
        ),
        max_size=8,
    ),
    st.data(),
)
def test_any_cut_gives_the_same_events(
    parts: list[bytes | MouseEvent], data: st.DataObject
) -> None:
    """Bytes without an escape in them, and reports, cut anywhere past a report's `ESC [`:
    the same events (bytes may come in other pieces). (A cut right after ESC or ESC [ is
    not mended: they are keys of their own, Escape and Alt-[, never held back; a terminal
    writes a report whole.)"""
    parts = [p for p in parts if not isinstance(p, bytes) or b"\x1b" not in p]
    stream = b"".join(p if isinstance(p, bytes) else _sgr(p) for p in parts)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=4)))
    cuts = [c for c in cuts if stream[c - 1 : c] != b"\x1b" and stream[c - 2 : c] != b"\x1b["]
    reader = MouseReader()
    got: list[bytes | MouseEvent] = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        got += reader.feed(stream[start:end])
    assert [e for e in got if isinstance(e, MouseEvent)] == [
        p for p in parts if isinstance(p, MouseEvent)
    ]
    assert b"".join(e for e in got if isinstance(e, bytes)) == b"".join(
        p for p in parts if isinstance(p, bytes)
    )


def _sgr(event: MouseEvent) -> bytes:
    end = b"m" if event.release else b"M"
    return b"\x1b[<%d;%d;%d%s" % (event.code, event.col + 1, event.row + 1, end)


def test_a_program_gets_only_what_it_asked_for() -> None:
    press, release = MouseEvent(0, 4, 9), MouseEvent(0, 4, 9, release=True)
    motion, wheel = MouseEvent(32, 4, 9), MouseEvent(64, 4, 9)
    hover = MouseEvent(35, 4, 9)
    assert for_program(press, modes(), 1, 2) == b""
    assert for_program(press, modes(1006), 1, 2) == b""  # an encoding alone asks nothing
    x10 = modes(9)
    assert for_program(press, x10, 1, 2) == b"\x1b[M" + bytes([32, 35, 34])
    assert for_program(release, x10, 1, 2) == b"" and for_program(wheel, x10, 1, 2) == b""
    normal = modes(1000, 1006)
    assert for_program(press, normal, 1, 2) == b"\x1b[<0;3;2M"
    assert for_program(release, normal, 1, 2) == b"\x1b[<0;3;2m"
    assert for_program(wheel, normal, 1, 2) == b"\x1b[<64;3;2M"
    assert for_program(motion, normal, 1, 2) == b""
    assert for_program(motion, modes(1002, 1006), 1, 2) == b"\x1b[<32;3;2M"
    assert for_program(hover, modes(1002, 1006), 1, 2) == b""
    assert for_program(hover, modes(1003, 1006), 1, 2) == b"\x1b[<35;3;2M"


def test_each_encoding() -> None:
    press, release = MouseEvent(0 | 16, 0, 0), MouseEvent(2, 0, 0, release=True)
    assert for_program(press, modes(1000), 9, 299) == b""  # beyond the classic encoding
    assert for_program(press, modes(1000), 9, 9) == b"\x1b[M" + bytes([48, 42, 42])
    assert for_program(release, modes(1000), 0, 0) == b"\x1b[M" + bytes([35, 33, 33])
    assert for_program(press, modes(1000, 1015), 9, 299) == b"\x1b[48;300;10M"
    assert for_program(press, modes(1000, 1005), 9, 299) == "\x1b[M0\u014c*".encode()


def test_screen_modes_follow_the_alternate_screen_and_cursor_keys() -> None:
    screen = ScreenModes()
    screen.feed(b"\x1b[?1049h\x1b[?1h")
    assert screen.on_alternate and screen.cursor_keys_application and not screen.mouse_wanted
    screen.feed(b"\x1b[?1049l\x1b[?1000h")
    assert not screen.on_alternate and screen.mouse_wanted
