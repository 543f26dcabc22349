"""Where copy mode's text goes and comes back from: the outer terminal's clipboard (OSC
52) and `]`, which pastes it into the focused pane (docs/windows.md#copy-mode). Pure.

The paste buffer is this `muxctl attach`'s own: it lives as long as the attach (as a
tmux buffer lives as long as its server); the terminal's clipboard keeps the text
beyond it, for every program of the desktop.
"""

import base64
from dataclasses import dataclass

from mux.protocol import attach as proto
from mux.protocol.paste import pasted


@dataclass
class PasteBuffer:
    """What `]` pastes: the text copy mode copied last (one for the whole attach: the
    lone pane's and the window view's)."""

    text: str = ""


def clipboard_sequence(text: str) -> bytes:
    """OSC 52: the terminal puts `text` on its clipboard (a terminal that does not
    take it ignores the sequence)."""
    return b"\x1b]52;c;" + base64.b64encode(text.encode()) + b"\x07"


def paste_frame(text: str, service_takes_paste: bool) -> proto.Paste | proto.Input:
    """The frame that pastes `text`: PASTE, or for a muxd from before it (WELCOME did
    not say `paste`), the same text typed, as a paste without brackets."""
    data = text.encode()
    return proto.Paste(data) if service_takes_paste else proto.Input(pasted(data, False))
