"""A terminal's last row kept for a status line while a pane's output streams to the
rows above it (docs/windows.md#the-status-line).

The pane is a row shorter than the terminal, and the terminal's scroll region ends
above the status line, so a line feed at the pane's bottom scrolls the rows above
it (and, the region starting at the top, into the terminal's own scrollback) and
never the status line. What the program writes is rewritten only where it would
reach that row: a scroll region it sets ends above it (`CSI r`: the whole pane), a
cursor it moves past the pane's bottom stops there. What clears or resets the
screen (ED from the cursor or whole, RIS, DECSTR, the alternate screen, DECCOLM,
DECALN, XTRESTORE) leaves the status line to be drawn again, which the owner does
once the stream is at a point between two sequences and two characters (`safe`),
with the pane's own scroll region again. (RIS gets it at once; after DECSTR, which
keeps the cursor where it is, only then: a line feed at the bottom in between would
scroll the status line too.) While the program's region ends above the pane's
bottom, a line feed below it would reach the status line (the terminal is a row
taller than the pane): the line is drawn again after every chunk then, with the
cursor put back; what such a program writes on the row below its pane in between
is only seen at the next repaint. Programs set such regions for a scroll and
reset them at once (ncurses, vim), with the cursor inside.

Pure: bytes in, bytes out; the owner writes them, and `draw`s the line.
"""

import re

from mux.protocol.visible import visible

STATUS_STYLE = "\x1b[0;30;42m"  # black on green, as tmux's status line

# At most this much of an unfinished sequence at the end of a chunk is held back
# until the next one (longer: let through, no longer a sequence a terminal takes).
MAX_HELD = 64

_SEQUENCE = re.compile(
    rb"\x1b\[(?P<private>[?!]?)(?P<params>[0-9;]*)(?P<final>[rHfdJhlp])"
    rb"|\x1b(?P<reset>c|#8)"
)
# A sequence begun and not over at the end of a chunk: a CSI, or an escape with its
# intermediate bytes (`ESC (`, `ESC #`), not yet given its final byte.
_UNFINISHED = re.compile(rb"\x1b(?:\[[\x30-\x3f]*[\x20-\x2f]*|[\x20-\x2f]*)\Z")
# DEC private modes whose change redraws or switches the screen: 132 columns (3),
# the alternate screen (47, 1047, 1049).
_SCREEN_MODES = frozenset({b"3", b"47", b"1047", b"1049"})
_INTRODUCER = b"\x1b"


class StatusRow:
    __slots__ = ("_held", "_pane_rows", "_partial", "_string", "dirty", "safe")

    def __init__(self, pane_rows: int) -> None:
        """`pane_rows`: the rows above the status line."""
        self._pane_rows = pane_rows
        self._held = b""
        self._string: bytes | None = None  # the kind of string the stream is inside
        self._partial = False  # the program's scroll region ends above the pane's bottom
        self.dirty = True  # the status line must be drawn (again)
        self.safe = True  # the stream written so far ends between sequences and characters

    @property
    def pane_rows(self) -> int:
        return self._pane_rows

    def resize(self, pane_rows: int) -> None:
        self._pane_rows = pane_rows
        self.dirty = True

    def draw(self, text: str, cursor_state: bytes) -> bytes:
        """What draws `text` (its controls shown escaped; cut at the last column) on the
        status line, then puts back the pane's `cursor_state` (its cursor, pen,
        character sets, scroll region and modes: mux.terminal.screen)."""
        self.dirty = False
        line = visible(text).encode()
        # No wrap (a text too long is cut), no origin or insert mode, the ASCII set.
        status = b"\x1b[?7l\x1b[?6l\x1b[4l\x1b[%d;1H\x1b(B\x0f" % (self._pane_rows + 1)
        style = STATUS_STYLE.encode()
        return status + style + b"\x1b[2K" + line + b"\x1b[0m\x1b[?7h" + cursor_state

    def restart(self) -> None:
        """A repaint starts the stream anew (its first ESC ends whatever sequence the
        terminal was in): what was held back of the old one is dropped."""
        self._held, self._string = b"", None

    def rewrite(self, data: bytes) -> bytes:
        """`data` as the terminal is to get it: its sequences kept off the status line;
        an unfinished sequence at its end waits for the next chunk."""
        if self._held:
            data, self._held = self._held + data, b""
        unfinished = _UNFINISHED.search(data, max(0, len(data) - MAX_HELD))
        if unfinished is not None:
            data, self._held = data[: unfinished.start()], data[unfinished.start() :]
        if _INTRODUCER in data:
            data = _SEQUENCE.sub(self._fix, data)
        if self._partial:  # (below such a region, a line feed could reach the last row)
            self.dirty = True
        in_ground = self._follow_strings(data)
        self.safe = in_ground and not self._held and _ends_whole(data)
        return data

    def _follow_strings(self, data: bytes) -> bool:
        """Whether a parser is in its ground state after `data` (False inside a title or
        a clipboard copy not yet ended, or a sequence not over)."""
        done = 0
        if self._string is not None:
            done = _string_end(data, 0, self._string)
            if done < 0:
                return False
            self._string = None
        last = max(data.rfind(b"\x1b" + kind, done) for kind in _STRINGS)
        if last >= 0:
            kind = data[last + 1 : last + 2]
            end = _string_end(data, last + 2, kind)
            if end < 0:
                self._string = kind
                return False
            done = end
        escape = data.rfind(b"\x1b", done)
        return escape < 0 or _FINISHED.match(data, escape) is not None

    def _fix(self, found: re.Match[bytes]) -> bytes:
        if found["reset"] is not None:
            self.dirty = True
            if found["reset"] == b"c":  # RIS: the region at once (homing, as RIS did)
                self._partial = False
                return found[0] + b"\x1b[1;%dr" % self._pane_rows
            return found[0]
        private, params, final = found["private"], found["params"], found["final"]
        if final in b"hl":
            if private == b"?" and not _SCREEN_MODES.isdisjoint(params.split(b";")):
                self.dirty = True
            return found[0]
        if final == b"p":  # DECSTR (`CSI ! p`) resets the scroll region too
            if private == b"!":
                self.dirty, self._partial = True, False
            return found[0]
        if final == b"J":  # ED: from the cursor (0) or all (2, 3) reaches the last row
            self.dirty = self.dirty or params not in (b"1",)
            return found[0]
        if private:  # (XTRESTORE, `CSI ? r`, may bring back any mode)
            self.dirty = True
            return found[0]
        if final == b"r":
            return self._region(params)
        return self._cursor(params, final)

    def _region(self, params: bytes) -> bytes:
        parts = params.split(b";")
        top = _number(parts[0], 1)
        bottom = min(_number(parts[1] if len(parts) > 1 else b"", self._pane_rows), self._pane_rows)
        self._partial = bottom < self._pane_rows
        return b"\x1b[%d;%dr" % (top, bottom)

    def _cursor(self, params: bytes, final: bytes) -> bytes:
        row, _, rest = params.partition(b";")
        if _number(row, 1) <= self._pane_rows:
            return b"\x1b[" + params + final
        column = b";" + rest if b";" in params else b""
        return b"\x1b[%d" % self._pane_rows + column + final


def _number(text: bytes, default: int) -> int:
    # (a parameter of more digits than any screen has rows is as good as the largest)
    return int(text[:6]) or default if text else default


def _ends_whole(data: bytes) -> bool:
    """`data` does not end inside a UTF-8 character."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return True
        if byte >= 0xC0:  # a lead byte: how many the character takes
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return back >= need
    return True


# A sequence from its ESC that is over: a CSI with its final byte, or an escape with
# its final byte (ST, `ESC \\`, included; not the start of a string).
_FINISHED = re.compile(
    rb"\x1b(?:\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"
    rb"|[\x20-\x2f]*[\x30-\x4f\x51-\x57\x59\x5a\x5c\x60-\x7e])"
)
# The strings (OSC, DCS, APC, PM, SOS) by the byte after their ESC; they end with ST,
# an OSC also with BEL.
_STRINGS = (b"]", b"P", b"_", b"^", b"X")


def _string_end(data: bytes, start: int, kind: bytes) -> int:
    """Where the string of `kind` that goes on at `start` ends (after its terminator);
    -1 when it does not end in `data`."""
    st = data.find(b"\x1b\\", start)
    if kind == b"]":
        bel = data.find(b"\x07", start)
        if bel >= 0 and (st < 0 or bel < st):
            return bel + 1
    return st + 2 if st >= 0 else -1
