"""An emulator's rows as text with SGR only, one string a row (mux.terminal.saved_contents); no I/O.

A row is its characters, each run of one pen after the SGR that sets exactly that pen
from any state (it starts with a reset), the row ended by a reset when styled, C0 and C1
controls a cell holds replaced by U+FFFD, and unless the row is wrapped its trailing
blanks that look like no cell at all left out.

Reading every cell through avt's Python objects costs about 40 ms for 2,000 rows, so
the rows are taken in bulk from avt's dump of the emulator (one Rust call) and the
dump's own encoding is undone: its SGR (avt writes the same parameters, extended colours
with colons), REP (`CSI n b`) for runs of one character, CR LF after each row not
wrapped, the pen carried over from the row before, and the settings it appends (tab
stops, saved cursor, cursor position). A row whose characters in the dump are not
exactly its `Line.text` is made from its cells instead (`row_text`), as every row is
if the dump fails.
"""

import re
from functools import cache

from avt._avt import Line, Pen, Vt
from avt._avt.util import TextUnwrapper

# avt re-exports these without declaring them; their typed home is avt._avt.
from mux.protocol.pen_sgr import sgr_params

SGR_RESET = "\x1b[0m"
# A cell never holds C0 or ESC, but avt keeps a C1 control (U+0080-U+009F; U+009B is a
# CSI to many terminals) as a character: written out it would be a control again.
_CONTROLS_TO_REPLACEMENT = str.maketrans(
    {code: "\ufffd" for code in [*range(0x20), *range(0x7F, 0xA0)]}
)
# avt's dump of a row: SGR (always from a reset: ESC [ 0 ... m) between runs of cells,
# REP after a character written more than five times in a row. No cell holds ESC or CR.
_DUMP_SGR = re.compile(r"(\x1b\[0[0-9;:]*m)")
_DUMP_REP = re.compile(r"(.)\x1b\[([0-9]+)b", re.DOTALL)
_DUMP_EXTENDED_COLOUR = re.compile(r"\x1b\[0[0-9;]*:[0-9;:]*m")
_DEFAULT_PEN = ("", SGR_RESET)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_ROW_END = "\r\n"
# What starts a dumped row whose characters are all spaces (a space, or its pen's SGR);
# the settings avt appends after the rows start with a C1 CSI or ESC [ m instead.
_DUMPED_BLANK_ROW_STARTS = (" ", "\x1b[0")
_SETTINGS_STARTS = ("\x9b", "\x1b[m")
# What avt's dump has after the primary screen's rows when the alternate screen is shown.
_IN_ALTERNATE_SCREEN = "\x9b?1047h\x9b1;1H"
# avt reports its internal failures as Rust panics (pyo3's PanicException, a BaseException).
_CONTROL_FLOW = (KeyboardInterrupt, SystemExit, GeneratorExit)

Run = tuple[str, str]  # (the SGR of a pen, "" or a reset for the default pen; text)


def styled_rows(vt: Vt, lines: list[Line]) -> list[tuple[str, bool]]:
    """Each of `lines` (all of `vt`'s lines: `vt.lines()`, scrollback then screen) as
    (its text with SGR, whether the terminal wrapped it). `vt` is resized to show them
    all: use it for nothing else afterwards."""
    unwrapper = TextUnwrapper()
    wrapped = [unwrapper.push(line) is None for line in lines]
    texts = [line.text for line in lines]
    dump = _DUMP_REP.sub(_repeated, _dump_of_all(vt, len(lines)))
    groups = _DUMP_EXTENDED_COLOUR.sub(_with_semicolons, dump).split(_ROW_END)
    controls = _CONTROL.search("".join(texts)) is not None
    rows: list[tuple[str, bool]] = []
    pen = ""  # the pen in effect in the dump, as its SGR
    blank_after = False  # avt left out the rows from here on: blank ones
    for group, dumped in enumerate(groups):
        first = len(rows)
        if first == len(lines) or not _dumped(texts[first], dumped):
            blank_after = group + 1 == len(groups) and dumped.startswith(_SETTINGS_STARTS)
            break
        last = first  # a group is the rows of one line, the last one not wrapped
        while wrapped[last] and last + 1 < len(lines):
            last += 1
        expected = texts[first] if last == first else "".join(texts[first : last + 1])
        shown = _DUMP_SGR.sub("", dumped)
        final = group + 1 == len(groups)  # avt's settings follow its rows
        if shown != expected and not (final and shown.startswith(expected)):
            break  # out of step with the dump: the cells will tell
        pieces = (
            [dumped] if last == first and not final else _pieces(dumped, texts[first : last + 1])
        )
        for index, piece in enumerate(pieces, start=first):
            keep = wrapped[index]
            text, after = _whole_row(piece, pen, keep_trailing_blanks=keep or controls)
            if text is None or controls:
                text = _formatted(_runs(piece, pen), keep_trailing_blanks=keep, controls=controls)
            rows.append((text, keep))
            pen = after
    for index in range(len(rows), len(lines)):
        if blank_after and not wrapped[index] and not texts[index].strip(" "):
            rows.append(("", False))  # what the cells make of a blank row, faster
        else:
            rows.append(
                (row_text(lines[index], keep_trailing_blanks=wrapped[index]), wrapped[index])
            )
    return rows


def _dump_of_all(vt: Vt, rows: int) -> str:
    """avt's dump of `vt` with all its lines in view ("" if avt failed)."""
    try:
        vt.resize(vt.size[0], rows)  # the scrollback comes into view, the lines unchanged
        dump = vt.dump()
    except _CONTROL_FLOW:
        raise
    except BaseException:
        return ""
    # In the alternate screen avt dumps the primary screen's rows first, not those in view.
    return "" if _IN_ALTERNATE_SCREEN in dump else dump


def _dumped(text: str, dumped: str) -> bool:
    """Whether the row of `text` starts `dumped`, a group of the dump: avt dumps a row of
    spaces only when it is not blank (or follows a wrapped one) and then starts it with a
    space or its SGR, never as the settings after the rows start."""
    return text.strip(" ") != "" or dumped.startswith(_DUMPED_BLANK_ROW_STARTS)


def _repeated(match: re.Match[str]) -> str:
    return match[1] * (int(match[2]) + 1)


def _pieces(dumped: str, texts: list[str]) -> list[str]:
    """`dumped` cut after the characters of each row of `texts` (an SGR at a cut goes with
    the row after it); what follows the last row is left out."""
    pieces: list[str] = []
    piece: list[str] = []
    rows = iter(texts)
    needed = len(next(rows))
    for part in _DUMP_SGR.split(dumped):
        if part.startswith("\x1b"):
            piece.append(part)
            continue
        rest = part
        while len(rest) >= needed:
            piece.append(rest[:needed])
            pieces.append("".join(piece))
            piece, rest = [], rest[needed:]
            text = next(rows, None)
            if text is None:
                return pieces
            needed = len(text)
        piece.append(rest)
        needed -= len(rest)
    return pieces


def _runs(dumped: str, pen: str) -> list[Run]:
    """The runs of a dumped row, `pen` in effect before it."""
    parts = _DUMP_SGR.split(dumped)
    return [(pen, parts[0]), *zip(parts[1::2], parts[2::2], strict=True)]


def _whole_row(dumped: str, pen: str, *, keep_trailing_blanks: bool) -> tuple[str | None, str]:
    """A dumped row, `pen` in effect before it, as `_formatted` makes it, and the pen in
    effect after it; None when its trailing blanks take more than its last run (then
    `_formatted` sees to it)."""
    at = dumped.rfind("\x1b[")
    pen_after = dumped[at : dumped.index("m", at) + 1] if at >= 0 else pen
    if not dumped.startswith("\x1b["):
        if pen not in _DEFAULT_PEN:
            dumped = pen + dumped  # the row starts with the pen of the one before
    elif dumped.startswith(SGR_RESET):
        dumped = dumped[len(SGR_RESET) :]  # a row starts with the default pen anyway
    end_pen = "" if pen_after in _DEFAULT_PEN else pen_after  # the last run's
    kept = dumped.rstrip(" ")
    if not keep_trailing_blanks and len(kept) < len(dumped) and _blank_is_invisible_in(pen_after):
        if pen_after and kept.endswith(pen_after):  # the last run was all blanks
            before = kept[: -len(pen_after)]
            if end_pen or not before or before.endswith(" "):
                return None, pen_after
            return kept, pen_after  # the reset after the last styled run ends the row
        dumped = kept
    return (dumped + SGR_RESET if end_pen else dumped), pen_after


def _formatted(runs: list[Run], *, keep_trailing_blanks: bool, controls: bool) -> str:
    if not keep_trailing_blanks:
        while runs and _blank_is_invisible_in(runs[-1][0]):
            kept = runs[-1][1].rstrip(" ")
            if kept:
                runs[-1] = (runs[-1][0], kept)
                break
            runs.pop()
    out: list[str] = []
    styled = False
    for sgr, text in runs:
        if not text:
            continue
        if sgr in _DEFAULT_PEN:
            if styled:
                out.append(SGR_RESET)
            styled = False
        else:
            out.append(sgr)
            styled = True
        out.append(text.translate(_CONTROLS_TO_REPLACEMENT) if controls else text)
    if styled:
        out.append(SGR_RESET)
    return "".join(out)


def _with_semicolons(sgr: re.Match[str]) -> str:
    """avt's SGR as `_sgr` writes it: extended colours with semicolons (the form every
    terminal reads) rather than colons."""
    return sgr[0].replace(":", ";")


@cache
def _blank_is_invisible_in(sgr: str) -> bool:
    """`_blank_is_invisible` for the pen avt dumps as `sgr`: ESC [ 0, the colours (two or
    three digits, 38 and 48 with their own parameters), then one digit an attribute."""
    params = sgr.removeprefix("\x1b[0").removesuffix("m").split(";")[1:]
    index = 0
    while index < len(params) and len(params[index]) > 1:
        code = params[index]
        if code.startswith(("4", "10")):
            return False  # a background
        index += (3 if params[index + 1] == "5" else 5) if code == "38" else 1
    return not {"4", "7", "9"} & set(params[index:])  # underline, reverse, strikethrough


def row_text(row: Line, *, keep_trailing_blanks: bool) -> str:
    """One row's characters, each run of one pen after its SGR, ended with a reset."""
    if row.is_empty():
        return ""
    cells = row.cells
    end = len(cells)
    if not keep_trailing_blanks:
        while end and cells[end - 1].char == " " and _blank_is_invisible(cells[end - 1].pen):
            end -= 1
    out: list[str] = []
    run: list[str] = []
    pen: Pen | None = None
    styled = False
    for cell in cells[:end]:
        if not cell.width:
            continue  # the second half of a wide character
        cell_pen = cell.pen
        if pen is None or cell_pen != pen:
            out.append("".join(run).translate(_CONTROLS_TO_REPLACEMENT))
            run = []
            pen = cell_pen
            if cell_pen.is_default():
                if styled:
                    out.append(SGR_RESET)
                styled = False
            else:
                out.append(_sgr(cell_pen))
                styled = True
        run.append(cell.char)
    out.append("".join(run).translate(_CONTROLS_TO_REPLACEMENT))
    if styled:
        out.append(SGR_RESET)
    return "".join(out)


def _blank_is_invisible(pen: Pen) -> bool:
    """A space with this pen looks like no cell at all (no background, line or reverse)."""
    return pen.background is None and not (pen.inverse or pen.underline or pen.strikethrough)


def _sgr(pen: Pen) -> str:
    """SGR that sets exactly `pen` from any state (it starts with a reset)."""
    return "\x1b[" + ";".join(["0", *sgr_params(pen)]) + "m"
