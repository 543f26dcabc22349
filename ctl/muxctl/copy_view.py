"""What copy mode (muxctl.copy_mode) looks like: its rows as drawn in a region of the
terminal, each exactly as wide as the region, and where the cursor is; pure.

As tmux draws it: the lines shown, the selection in reverse video, the last search's
matches on yellow, the position (`[lines below the view/lines above the last page]`) or
a message at the top right, and a search being typed on the bottom row.
"""

from wcwidth import wcwidth

from muxctl.copy_mode import CopyMode

RESET = "\x1b[0m"
SELECTED = "\x1b[0;7m"
MATCH = "\x1b[0;30;43m"
INDICATOR = "\x1b[0;30;43m"  # tmux's mode-style: black on yellow
PROMPT = "\x1b[0;30;42m"  # as the status line
Cell = tuple[str, int, str]  # a glyph (its combining marks with it), its width, its style


def rows(mode: CopyMode, corner: bool = False) -> list[str]:
    """Each row of the view, drawn: text, then default spaces to the region's width.
    `corner`: the region holds the terminal's last cell, which its last row leaves out
    (writing there may scroll the terminal)."""
    drawn = [_line_cells(mode, mode.top + row) for row in range(mode.rows)]
    note = mode.message or f"[{mode.bottom_top - mode.top}/{mode.bottom_top}]"
    drawn[0] = _over(drawn[0], _cells(note, INDICATOR), max(0, mode.cols - len(note)), mode.cols)
    if mode.prompt is not None:
        drawn[-1] = _over([], _cells(_prompt(mode), PROMPT), 0, mode.cols)
    widths = [mode.cols] * (mode.rows - 1) + [mode.cols - 1 if corner else mode.cols]
    return [_form(cells, width) for cells, width in zip(drawn, widths, strict=True)]


def cursor(mode: CopyMode) -> tuple[int, int]:
    """(row, col) of the cursor in the region: on the search being typed, else on the
    character at the copy cursor."""
    if mode.prompt is not None:
        width = sum(cell[1] for cell in _cells(_prompt(mode), PROMPT))
        return (mode.rows - 1, min(width, mode.cols - 1))
    line, col = mode.cursor
    text = mode.lines[line][:col]
    width = sum(max(0, wcwidth(char)) for char in text)
    return (line - mode.top, min(width, mode.cols - 1))


def _prompt(mode: CopyMode) -> str:
    way = "down" if mode.prompt_forward else "up"
    return f"(search {way}) {mode.prompt}"


def _line_cells(mode: CopyMode, line: int) -> list[Cell]:
    if line >= len(mode.lines):
        return []
    text = mode.lines[line]
    styles = [""] * len(text)
    for start, end in mode.matches(line):
        styles[start:end] = [MATCH] * (end - start)
    chosen = mode.selection()
    if chosen is not None and chosen[0][0] <= line <= chosen[1][0]:
        start = chosen[0][1] if line == chosen[0][0] else 0
        end = chosen[1][1] + 1 if line == chosen[1][0] else len(text)
        styles[start:end] = [SELECTED] * max(0, min(end, len(text)) - start)
    cells: list[Cell] = []
    for char, style in zip(text, styles, strict=True):
        _add(cells, char, style)
    return cells


def _cells(text: str, style: str) -> list[Cell]:
    cells: list[Cell] = []
    for char in text:
        _add(cells, char, style)
    return cells


def _add(cells: list[Cell], char: str, style: str) -> None:
    width = wcwidth(char)
    if width == 0 and cells:  # a combining mark: with the character before it
        glyph, glyph_width, glyph_style = cells[-1]
        cells[-1] = (glyph + char, glyph_width, glyph_style)
    elif width > 0:
        cells.append((char, width, style))
    else:  # (no width known: shown as one cell, not left out)
        cells.append(("?" if width < 0 else char, 1, style))


def _over(under: list[Cell], over: list[Cell], at: int, width: int) -> list[Cell]:
    """`under` up to column `at` (a wide character cut there becomes a space), then
    `over` from there."""
    kept: list[Cell] = []
    col = 0
    for cell in under:
        if col + cell[1] > at:
            if col < at:
                kept.append((" ", 1, ""))
            break
        kept.append(cell)
        col += cell[1]
    kept.extend([(" ", 1, "")] * (at - sum(cell[1] for cell in kept)))
    return kept + over


def _form(cells: list[Cell], width: int) -> str:
    """The cells as escape sequences: clipped to `width` (a wide character that would
    cross it becomes a space), padded with default spaces; every style run ends with a
    reset, so the pen is the default one after it."""
    parts: list[str] = []
    col = 0
    style = ""
    for glyph, cell_width, cell_style in cells:
        if col >= width:
            break
        crosses = col + cell_width > width
        if cell_style != style:
            parts.append(cell_style or RESET)
            style = cell_style
        parts.append(" " if crosses else glyph)
        col += 1 if crosses else cell_width
    if style:
        parts.append(RESET)
    parts.append(" " * (width - col))
    return "".join(parts)
