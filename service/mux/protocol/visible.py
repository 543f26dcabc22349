"""Text from panes, clients or satellites made safe to show a person; no I/O.

A terminal obeys what it is sent: an ESC, a C1 control (U+0080-U+009F, U+009B
alone is a CSI to many terminals) or DEL in a title or a path printed raw can
write the clipboard (OSC 52), clear the screen or retitle the window, and a bidi
control (U+202E) can make `rm -rf ~` read as something else. `visible` writes
each such character as an escape a person can read (`\\x1b`, `\\u202e`), so the
text still says exactly what it holds; a backslash is left alone (it is no
control, and doubling it would make ordinary Windows-like paths hard to read).
`--json` output keeps the exact string: programs, not people, read it (SPEC §12).

Titles are kept without C0, DEL and C1 at all (`without_controls`): a title is one
line of text, and no terminal control has a meaning in it. Bidi controls stay in
titles, as they belong to right-to-left text; `visible` still escapes them when
the title is printed.
"""

import re
from typing import TypeGuard

# C0 but newline and tab for multi-line text (`visible_lines`); all of C0 otherwise.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROLS = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI_CONTROLS}]")
_CONTROLS_BUT_LINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}]")
# C0, DEL and C1: what a terminal obeys (bidi controls only reorder what is shown).
_TERMINAL_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` on one line with every control character written as an escape."""
    return _CONTROLS.sub(_escape, text)


def visible_lines(text: str) -> str:
    """As `visible`, but newlines and tabs stay: for text meant to span lines."""
    return _CONTROLS_BUT_LINES.sub(_escape, text)


def has_controls(text: str) -> bool:
    """Whether `visible` would change `text`."""
    return _CONTROLS.search(text) is not None


def without_controls(text: str) -> str:
    """`text` without C0, DEL and C1 characters (bidi controls kept): for titles."""
    return _TERMINAL_CONTROLS.sub("", text)


def has_terminal_controls(text: str) -> bool:
    """Whether `text` holds a C0, DEL or C1 character (bidi controls not counted)."""
    return _TERMINAL_CONTROLS.search(text) is not None


def is_text(value: object) -> TypeGuard[str]:
    """A string that is text: JSON's escapes (`\\ud800`) can make lone surrogates, which
    cannot be written as UTF-8 — to a terminal, a log or a checkpoint file."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
