"""The mouse in the window view (docs/windows.md#the-mouse): the reports the outer
terminal sends once asked for them (SGR encoding, xterm's mode 1006), read out of what
is typed; and a report encoded again for a program in a pane that asked for the mouse,
in its region's coordinates and the encoding it chose. Pure: bytes in, events and
bytes out.
"""

import re
from dataclasses import dataclass, replace

from mux.protocol.modes import ScreenModes

# What the view asks of the outer terminal: reports of presses, releases, motion while a
# button is held (to drag a border), in the SGR encoding (no limit on coordinates).
# rawterm.RESET_MODES turns them off again.
MOUSE_ON = b"\x1b[?1000h\x1b[?1002h\x1b[?1006h"

# ESC [ < button ; column ; row, then M (a press, or motion) or m (a release). Bounded:
# a terminal's report is a few digits each.
_REPORT = re.compile(rb"\x1b\[<(\d{1,5});(\d{1,5});(\d{1,5})([Mm])")
# The start of a report cut at the end of a read: kept for the next one. (Not a lone
# ESC, nor ESC [: those are keys of their own, Escape and Alt-[.)
_REPORT_START = re.compile(rb"\x1b\[<[0-9;]{0,17}\Z")

LEFT, MIDDLE, RIGHT = 0, 1, 2
WHEEL_UP, WHEEL_DOWN = 64, 65
_MOTION = 32
_MODIFIERS = 4 | 8 | 16  # shift, meta, control
X10_LIMIT = 223  # the largest coordinate the classic encoding can carry (255 - 32)


@dataclass(frozen=True)
class MouseEvent:
    """One report: `code` is xterm's button byte (the button in its low bits, wheel 64
    and 65, motion +32, modifiers +4/+8/+16); `row`, `col` 0-based on the terminal."""

    code: int
    row: int
    col: int
    release: bool = False

    @property
    def button(self) -> int:
        """The button (LEFT, MIDDLE, RIGHT, WHEEL_UP, WHEEL_DOWN...), without motion and
        modifiers; 3 for motion with no button held."""
        return self.code & ~(_MOTION | _MODIFIERS)

    @property
    def motion(self) -> bool:
        return bool(self.code & _MOTION)

    @property
    def wheel(self) -> bool:
        return self.button in (WHEEL_UP, WHEEL_DOWN)

    @property
    def press(self) -> bool:
        """A button went down (not a release, not motion, not the wheel)."""
        return not (self.release or self.motion or self.wheel)


class MouseReader:
    """Splits what the terminal sends into typed bytes and mouse reports; a report cut
    at the end of one read is completed by the next."""

    def __init__(self) -> None:
        self._held = b""

    def feed(self, data: bytes) -> list[bytes | MouseEvent]:
        data, self._held = self._held + data, b""
        if b"\x1b[<" not in data:
            return [data] if data else []
        out: list[bytes | MouseEvent] = []
        at = 0
        for match in _REPORT.finditer(data):
            if match.start() > at:
                out.append(data[at : match.start()])
            code, col, row = (int(match.group(i)) for i in (1, 2, 3))
            out.append(MouseEvent(code, max(0, row - 1), max(0, col - 1), match.group(4) == b"m"))
            at = match.end()
        rest = data[at:]
        if (cut := _REPORT_START.search(rest)) is not None:
            rest, self._held = rest[: cut.start()], rest[cut.start() :]
        if rest:
            out.append(rest)
        return out


def for_program(event: MouseEvent, modes: ScreenModes, row: int, col: int) -> bytes:
    """`event` as the program of a pane would have it from a terminal of its own, at
    (`row`, `col`) of its region, 0-based: only what its tracking mode asks for (9:
    presses; 1000: and releases and the wheel; 1002: and motion with a button held;
    1003: all motion), in the encoding it chose (1006 SGR, 1015 urxvt, 1005 UTF-8, else
    the classic bytes). b"" when it asked for none of it."""
    enabled = modes.enabled
    tracking = enabled & {1000, 1002, 1003}
    if 9 in enabled and not tracking:
        if not event.press:
            return b""
        event = replace(event, code=event.button)  # (X10: no modifiers)
    elif not tracking or (event.motion and not _motion_wanted(event, tracking)):
        return b""
    if event.wheel and event.release:
        return b""  # (a wheel has no release)
    x, y = col + 1, row + 1
    if 1006 in enabled:
        return b"\x1b[<%d;%d;%d%s" % (event.code, x, y, b"m" if event.release else b"M")
    code = (event.code & ~3) | 3 if event.release else event.code  # (which one: unknown)
    if 1015 in enabled:
        return b"\x1b[%d;%d;%dM" % (code + 32, x, y)
    if 1005 in enabled:
        return b"\x1b[M" + (chr(code + 32) + chr(x + 32) + chr(y + 32)).encode()
    if x > X10_LIMIT or y > X10_LIMIT:
        return b""  # (beyond what the encoding can say, as xterm does)
    return b"\x1b[M" + bytes([code + 32, x + 32, y + 32])


def _motion_wanted(event: MouseEvent, tracking: set[int] | frozenset[int]) -> bool:
    """1003 wants all motion, 1002 motion with a button held (3: none is)."""
    return 1003 in tracking or (1002 in tracking and event.button != 3)
