"""Text pasted into a pane (the attach protocol's PASTE, `]` in `muxctl attach`) as the
bytes its program reads; no I/O.

As a terminal pastes: a newline becomes Enter (CR, as tmux's paste-buffer does), and
the text is bracketed (`ESC [200~` ... `ESC [201~`) when the program asked for that
(DECSET 2004), so that a shell or an editor takes it as text, not as typed commands.
What pasted text may not hold is taken out first, as xterm does: every C0 control but
tab and the newlines, DEL, and the C1 controls. Otherwise an `ESC [201~` inside the
text would end the bracket early and the rest would run as typed, or an escape
sequence would drive the program.
"""

import re

BRACKET_OPEN = b"\x1b[200~"
BRACKET_CLOSE = b"\x1b[201~"
BRACKETED_PASTE_ON = b"\x1b[?2004h"  # what asks a terminal to bracket pastes
_NOT_PASTED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def pasted(data: bytes, bracketed: bool) -> bytes:
    """What the program reads for pasted `data` (UTF-8; what is not is replaced)."""
    text = _NOT_PASTED.sub("", data.decode(errors="replace"))
    body = text.replace("\r\n", "\r").replace("\n", "\r").encode()
    return BRACKET_OPEN + body + BRACKET_CLOSE if bracketed and body else body
