"""The terminal modes a repaint must set again that the emulator does not keep: mouse
reporting, bracketed paste, focus events and the application keypad; no I/O. The
window view of `muxctl attach` follows them too (and the alternate screen), to pass
the mouse to a program that asked for it.

A program turns them on once (vim with `mouse=a`, a shell with bracketed paste);
a terminal that attaches later would otherwise never hear of it. A sequence
split across two reads is not seen (rare: a program writes the few bytes of a
mode change at once).
"""

import re

# DECSET/DECRST numbers kept: X10 and normal/button/any-event mouse tracking, the
# UTF-8, SGR and urxvt mouse encodings, focus events, bracketed paste.
BRACKETED_PASTE = 2004
# The application keypad (DECNKM), which programs set with ESC = (DECKPAM) and reset with
# ESC > (DECKPNM): written back so, as every terminal takes those.
KEYPAD = 66
MOUSE_TRACKING = (9, 1000, 1002, 1003)
TRACKED = (*MOUSE_TRACKING, 1005, 1006, 1015, 1004, BRACKETED_PASTE, KEYPAD)
ALTERNATE_SCREEN = (47, 1047, 1049)
CURSOR_KEYS = 1  # DECCKM: the arrow keys as ESC O A, not ESC [ A
# Bounded: a program's `ESC [ ? <5,000 digits> h` is no mode, and int() of it raises
# (Python's digit limit), which stopped the pane's output handling.
_SET_OR_RESET = re.compile(rb"\x1b\[\?([0-9;]{1,64})([hl])")
_KEYPAD_SET_OR_RESET = re.compile(rb"\x1b([=>])")


class ModeTracker:
    tracked: tuple[int, ...] = TRACKED

    def __init__(self, enabled: frozenset[int] = frozenset()) -> None:
        # Replaced, not changed in place, on the rare mode change: a set of its own
        # would cost every pane 0.2 KiB.
        self.enabled = enabled

    def feed(self, data: bytes) -> None:
        if b"\x1b=" in data or b"\x1b>" in data:
            *_, last = _KEYPAD_SET_OR_RESET.finditer(data)
            self._turn(KEYPAD, last.group(1) == b"=")
        if b"\x1b[?" not in data:
            return
        for match in _SET_OR_RESET.finditer(data):
            on = match.group(2) == b"h"
            for number in match.group(1).split(b";"):
                if number.isdigit() and int(number) in self.tracked:
                    self._turn(int(number), on)

    def _turn(self, mode: int, on: bool) -> None:
        if on:
            self.enabled = self.enabled | {mode}
        else:
            self.enabled = self.enabled - {mode}

    def sequence(self) -> bytes:
        """Every tracked mode set as the program left it: the off ones reset first (the
        terminal may have had them on from another pane), then the on ones — resetting
        any mouse mode turns every one off, in xterm as in tmux."""
        off = [mode for mode in self.tracked if mode not in self.enabled]
        on = [mode for mode in self.tracked if mode in self.enabled]
        return b"".join(
            [*(_written(mode, False) for mode in off), *(_written(mode, True) for mode in on)]
        )


def _written(mode: int, on: bool) -> bytes:
    if mode == KEYPAD:
        return b"\x1b=" if on else b"\x1b>"
    return b"\x1b[?%d%s" % (mode, b"h" if on else b"l")


class ScreenModes(ModeTracker):
    """The modes, whether the program is on the alternate screen and which arrow keys
    it reads: what a client drawing the pane needs to know to hand it the mouse."""

    tracked: tuple[int, ...] = (*TRACKED, *ALTERNATE_SCREEN, CURSOR_KEYS)

    @property
    def on_alternate(self) -> bool:
        return any(mode in self.enabled for mode in ALTERNATE_SCREEN)

    @property
    def cursor_keys_application(self) -> bool:
        return CURSOR_KEYS in self.enabled

    @property
    def mouse_wanted(self) -> bool:
        """The program asked for mouse reports (any kind of tracking)."""
        return any(mode in self.enabled for mode in MOUSE_TRACKING)
