"""Combining marks as a terminal shows them, for the emulator (avt 0.1.2) that gives
each one a cell of its own: `e` then U+0301 took two cells there, so everything after
it on the row went one column too far (a cursor move then wrote over the wrong cell),
and a mark printed after the last column went to the next row, where xterm and tmux
join it to the last character (`"C" * 80 + U+0301`: Ć in column 80).

A character followed by marks of the combining diacritical blocks is composed (NFC)
before the emulator sees it: `e` U+0301 becomes é, one cell, as on the terminal. A
mark with no composed form with its character (`x` U+0301) is left out: the row keeps
every other character in its column, and only that accent is not on mux's copy of
the screen. A character and its marks split across two reads of output are not
composed (rare: a program writes them together). Pure: text in, text out.
"""

import re
import unicodedata

# Combining Diacritical Marks, their Extended and Supplement blocks, those for Symbols,
# Combining Half Marks: what Latin, Greek and Cyrillic text puts after a letter.
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_MARKED = re.compile(f"[^{_MARKS}\\x00-\\x1f\\x7f]?[{_MARKS}]+")


def composed(text: str) -> str:
    """`text` with each character and its combining marks in one code point where
    Unicode has one, and the marks that do not compose left out."""
    if text.isascii():  # (most output: at C speed)
        return text
    return _MARKED.sub(_compose, text)


def _compose(found: re.Match[str]) -> str:
    together = unicodedata.normalize("NFC", found[0])
    return "".join(char for char in together if unicodedata.category(char) not in ("Mn", "Me"))
