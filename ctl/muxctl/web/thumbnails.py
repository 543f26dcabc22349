"""A pane's screen as the overview draws it: each row a list of runs of one pen, with
the colours as CSS understands them (xterm's palette). Pure.

A run is `[text]` in the default pen, else `[text, fg, bg, flags]`: `fg`/`bg` a CSS
colour or "" (the default), `flags` some of "b" bold, "f" faint, "i" italic, "u"
underline, "r" reverse (the page swaps the colours), "s" struck through. Spaces in the
default pen at a row's end are left out.
"""

from collections.abc import Iterable, Sequence

# avt re-exports these without declaring them; their typed home is avt._avt.
from avt._avt import Cell, Color, Line, Pen

Run = list[str]

# xterm's 16 colours (its defaults, as XTerm's resources set them).
_BASE16 = (
    "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
    "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
)  # fmt: skip
_CUBE = (0, 95, 135, 175, 215, 255)
_FLAGS = (
    ("bold", "b"),
    ("faint", "f"),
    ("italic", "i"),
    ("underline", "u"),
    ("inverse", "r"),
    ("strikethrough", "s"),
)


def css_colour(colour: Color | None) -> str:
    if colour is None:
        return ""
    if isinstance(colour, Color.RGB):
        red, green, blue = colour[0], colour[1], colour[2]
        return f"#{red:02x}{green:02x}{blue:02x}"
    assert isinstance(colour, Color.Indexed)
    index = colour[0]
    if index < 16:
        return _BASE16[index]
    if index < 232:
        index -= 16
        red, green, blue = _CUBE[index // 36], _CUBE[index // 6 % 6], _CUBE[index % 6]
        return f"#{red:02x}{green:02x}{blue:02x}"
    grey = 8 + 10 * (index - 232)
    return f"#{grey:02x}{grey:02x}{grey:02x}"


def _style(pen: Pen) -> tuple[str, ...]:
    flags = "".join(code for name, code in _FLAGS if getattr(pen, name))
    fg, bg = css_colour(pen.foreground), css_colour(pen.background)
    return (fg, bg, flags) if fg or bg or flags else ()


def row_runs(cells: Iterable[Cell]) -> list[Run]:
    runs: list[Run] = []
    text: list[str] = []
    style: tuple[str, ...] = ()
    for cell in cells:
        if cell.width == 0:  # the continuation of a wide character
            continue
        cell_style = _style(cell.pen)
        if cell_style != style and text:
            runs.append(["".join(text), *style])
            text = []
        style = cell_style
        text.append(cell.char)
    if text:
        runs.append(["".join(text), *style])
    if runs and len(runs[-1]) == 1:  # (trailing default spaces: nothing to draw)
        last = runs[-1][0].rstrip(" ")
        if last:
            runs[-1] = [last]
        else:
            runs.pop()
    return runs


def screen_runs(lines: Sequence[Line]) -> list[list[Run]]:
    return [row_runs(line.cells) for line in lines]
