"""The line between a restored pane's old contents and its new program's output; no I/O.

`── restored <local time> · <program> started again ──` (SPEC §13), dim, wrapped at
word boundaries to the pane's width: a terminal left to wrap it would cut words
anywhere. The program's name comes from a saved file, so its controls are escaped
(mux.protocol.visible): the marker changes nothing but the pen it resets.
"""

from mux.protocol.visible import visible
from mux.terminal.saved_contents import SGR_RESET, wrap_words

SGR_DIM = "\x1b[2m"


def restored_marker(when: str, program: str, cols: int, *, at_line_start: bool = True) -> bytes:
    """The marker's rows, from column 1 (after a line break first unless `at_line_start`:
    the cursor is where the contents left it, at the start of a line), each dim and the
    pen reset after it, ending at the start of the next line."""
    text = f"── restored {visible(when)} · {visible(program)} started again ──"
    rows = wrap_words(text, cols)
    before = SGR_RESET + ("\r" if at_line_start else "\r\n")
    body = "\r\n".join(SGR_DIM + row + SGR_RESET for row in rows)
    return (before + body + "\r\n").encode()
