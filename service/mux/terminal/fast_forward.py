"""Which part of a flood of plain text an emulator may skip without changing its screen.

A program that floods its terminal (`cat` of a log, a build) prints far more lines
than the screen and the lines kept above it hold: all but the last of them scroll
away. Plain text (printable characters, CR, LF, tab, backspace, bell) changes no
state but the cells and the cursor. When it holds a screenful of line feeds, it
ends with the cursor at the start of a blank bottom row, whatever came before; and
when a screenful and the kept lines of line feeds follow it, nothing it wrote
survives. So the emulator ends the same whether it is fed or skipped, provided it
is brought to the start of a blank bottom row instead (`JUMP`: a CR and a
screenful of line feeds), in its ground state, with no scroll region (the screen's
business: see `mux.terminal.screen`). Emulating is most of what a flood costs muxd.

Pure: text in, positions out.
"""

import re

# Least plain text worth skipping (less is emulated as it is: the check costs a dump).
MIN_SKIP_CHARS = 8192

# What changes state beyond the cells and the cursor, or begins a sequence: ESC, the
# shifts (SO, SI), CAN and SUB (which end a sequence), and every C1 control (avt takes
# U+0080..U+009F for them: CSI, OSC, DCS, HTS setting a tab stop...).
_NOT_PLAIN_C0 = "\x0e\x0f\x18\x1a\x1b"
_C1 = re.compile("[\x80-\x9f]")
_INTRODUCERS = "\x1b\x90\x98\x9b\x9d\x9e\x9f"
# A sequence at an introducer that is over (the parser back in its ground state):
# a CSI with its final byte, an OSC ended by BEL, or an escape with its final byte
# (ST, `ESC \`, included). A C0 control inside a CSI, or a string (DCS, SOS, PM,
# APC; an OSC ended by ST) still open, do not match: not known to be over.
_FINISHED = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*\x07"
    r"|\x1b[\x20-\x2f]*[\x30-\x4f\x51-\x57\x59\x5a\x5c\x60-\x7e]"
)


def ends_in_ground(text: str, before: bool) -> bool:
    """Whether a parser that was in its ground state (`before`) is in it after `text`.
    False when unsure (a sequence it cannot tell is over)."""
    last = max(text.rfind(char) for char in _INTRODUCERS)
    if last < 0:
        return before
    finished = _FINISHED.match(text, last)
    return finished is not None


def jump(rows: int) -> str:
    """What brings an emulator of `rows` rows (no scroll region) to the start of a
    blank bottom row, as the skipped text would have."""
    return "\r" + "\n" * rows


def skippable(text: str, rows: int, kept: int, ground_before: bool) -> tuple[int, int] | None:
    """(start, end) of plain text in `text` that holds `rows` line feeds (it ends
    with one), before which the parser is in its ground state, and after which
    `rows + kept` line feeds come before anything but plain text, for an emulator of
    `rows` rows keeping `kept` lines above them; None when there is none worth
    skipping. (Only the plain text `text` ends with is looked at: a sequence after
    the line feeds, a scroll region set, could keep what they would push away.)"""
    if len(text) < MIN_SKIP_CHARS:
        return None
    start = _plain_from(text, len(text))
    if start is None or (start == 0 and not ground_before):
        return None
    end = len(text)
    for _ in range(rows + kept + 1):  # (the last: the line feed the skipped part ends with)
        end = text.rfind("\n", start, end)
        if end < 0:
            return None
    end += 1
    if end - start < MIN_SKIP_CHARS or text.count("\n", start, end) < rows:
        return None
    return start, end


def _plain_from(text: str, end: int) -> int | None:
    """Where the plain text that ends at `end` begins: just after the sequence or
    control before it (0: from the start); None when that sequence is not over."""
    # (str.rfind runs at memory speed, a regex at a tenth of it: the C0 controls one by
    # one, then the C1 controls by regex in what follows them, only if it is not ASCII)
    at = max(text.rfind(char, 0, end) for char in _NOT_PLAIN_C0)
    rest = text[at + 1 : end]
    if not rest.isascii() and (c1 := _C1.search(rest[::-1])) is not None:
        at += len(rest) - c1.start()
    if at < 0:
        return 0
    if text[at] not in _INTRODUCERS:
        return at + 1
    finished = _FINISHED.match(text, at)
    return finished.end() if finished is not None else None
