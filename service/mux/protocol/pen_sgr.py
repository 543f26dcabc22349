"""The SGR parameters that select an emulator cell's pen (avt's `Pen`), declared once for
muxd's saved contents (mux.terminal.styled_rows) and the window view's drawing
(muxctl.pane_screen). Extended colours with semicolons, the form every terminal reads.
Pure."""

# avt re-exports these without declaring them; their typed home is avt._avt.
from avt._avt import Color, Pen

_ATTRIBUTES = (
    ("bold", "1"),
    ("faint", "2"),
    ("italic", "3"),
    ("underline", "4"),
    ("blink", "5"),
    ("inverse", "7"),
    ("strikethrough", "9"),
)


def sgr_params(pen: Pen) -> list[str]:
    """What selects `pen` after a reset: its colours, then its attributes; [] for the
    default pen."""
    params = []
    if pen.foreground is not None:
        params.append(colour_param(pen.foreground, background=False))
    if pen.background is not None:
        params.append(colour_param(pen.background, background=True))
    params.extend(code for name, code in _ATTRIBUTES if getattr(pen, name))
    return params


def colour_param(colour: Color, *, background: bool) -> str:
    base = 40 if background else 30
    if isinstance(colour, Color.RGB):
        return f"{base + 8};2;{colour[0]};{colour[1]};{colour[2]}"
    assert isinstance(colour, Color.Indexed)
    index = colour[0]
    if index < 8:
        return str(base + index)
    if index < 16:
        return str(base + 60 + index - 8)
    return f"{base + 8};5;{index}"
