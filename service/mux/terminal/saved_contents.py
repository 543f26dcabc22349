"""What of a pane's output is saved as its contents, and text laid out to a pane's width; no I/O.

A pane's contents (SPEC §13) are the last lines of its history and its screen as text
with SGR attributes only (colours, bold, dim, italic, underline, blink, reverse,
strikethrough) and CR LF: written into a fresh terminal, or into a new pane, they show
the old lines scrolled up with their colours and can change nothing else. Saved output
is a file's text at the next start, and a program's output is anything at all, so every
other control is dropped: no alternate screen, cursor move, mode, title, hyperlink,
clipboard write (OSC 52), question that makes a terminal answer (DA, DSR), C1 control
or BEL.

The text is made from the emulator's cells, not from the raw bytes: the history is fed
into a scratch emulator whose scrollback keeps `max_lines` lines (about 4 MiB for 2000,
only while the contents are made, which is on a worker, not the event loop), and the
screen comes from the pane's own emulator (its dump), which has seen all of its output.
A full-screen program (vim, less, htop in the alternate screen) leaves the lines below
it in the primary screen and what it shows as the last screenful. A line the terminal
wrapped is written without CR LF at its wrap, so a narrower or wider pane lays it out
again like the program's own output.
"""

import codecs
import logging
from collections.abc import Iterable, Iterator

import wcwidth

# avt re-exports these without declaring them; their typed home is avt._avt.
from avt._avt import Color, Line, Pen, Vt
from avt._avt.util import TextUnwrapper

log = logging.getLogger(__name__)

SGR_RESET = "\x1b[0m"
FEED_SLICE_CHARS = 16384  # avt is slower on very long strings (mux.terminal.screen)
# How avt's dump enters the alternate screen (it writes CSI as the C1 control or as ESC [).
_ALTERNATE_SCREEN_MARKS = ("\x9b?1047h", "\x1b[?1047h")
# Leaves the alternate screen if a scratch emulator is in it: its primary screen and
# scrollback are the lines scrolled up before the full-screen program started.
_LEAVE_ALTERNATE_SCREEN = "\x1b[?1049l"
# A cell never holds C0 or ESC, but avt keeps a C1 control (U+0080-U+009F; U+009B is a
# CSI to many terminals) as a character: written out it would be a control again.
_CONTROLS_TO_REPLACEMENT = str.maketrans(
    {code: "\ufffd" for code in [*range(0x20), *range(0x7F, 0xA0)]}
)
# avt reports its internal failures as Rust panics (pyo3's PanicException, a BaseException).
_CONTROL_FLOW = (KeyboardInterrupt, SystemExit, GeneratorExit)


def contents_of(
    history: bytes,
    screen_dump: str,
    rows: int,
    cols: int,
    *,
    max_lines: int,
    max_bytes: int,
    history_cut: bool = False,
) -> bytes:
    """A pane's contents: the last `max_lines` lines of `history` scrolled off its screen,
    then the screen `screen_dump` recreates (avt's dump, `Screen.dump_state`), at most
    `max_bytes` bytes (the oldest lines go first), each line ended by CR LF.

    `history`: the raw bytes of the pane's history ring (`Scrollback.contents`);
    `history_cut`: the ring lost its beginning, so it starts inside a line and maybe
    inside an escape sequence, which are skipped. Blank lines at the end are left out."""
    screen = Vt(cols, rows, scrollback_limit=0)
    if not _fed(screen, screen_dump):
        screen = Vt(cols, rows, scrollback_limit=0)
    alternate = any(mark in screen_dump for mark in _ALTERNATE_SCREEN_MARKS)
    earlier = _history_rows(
        history, rows, cols, max_lines=max_lines, cut=history_cut, alternate=alternate
    )
    if alternate:  # a full-screen program's screen starts a line of its own
        lines = [*_logical_lines(earlier), *_logical_lines(screen.view())]
    else:  # a line wrapped at the screen's top goes on in the screen
        lines = list(_logical_lines([*earlier, *screen.view()]))
    while lines and not lines[-1]:
        lines.pop()
    return _last_fitting(lines, max_bytes)


def _history_rows(
    history: bytes, rows: int, cols: int, *, max_lines: int, cut: bool, alternate: bool
) -> list[Line]:
    """The rows above the screen: scrolled off it, and in the alternate screen's case the
    primary screen's rows too (what the full-screen program covers), trailing blanks out."""
    if max_lines <= 0 or not history:
        return []
    if cut:
        history = history[history.find(b"\n") + 1 :] if b"\n" in history else b""
    scratch = Vt(cols, rows, scrollback_limit=max_lines)
    text = codecs.decode(history, "utf-8", errors="replace")
    if not _fed(scratch, text + _LEAVE_ALTERNATE_SCREEN):
        return []
    lines = scratch.lines()
    if not alternate:
        return lines[: len(lines) - rows]  # the screen itself comes from the pane's emulator
    while lines and _is_blank(lines[-1]):
        lines.pop()
    return lines[-max_lines:]


def _fed(vt: Vt, text: str) -> bool:
    """Feed `text`; False if the emulator failed (what a program wrote must never take
    the save down: the pane loses its saved contents, nothing else)."""
    try:
        for start in range(0, len(text), FEED_SLICE_CHARS):
            vt.feed_str(text[start : start + FEED_SLICE_CHARS])
    except _CONTROL_FLOW:
        raise
    except BaseException as e:
        log.error("the terminal emulator failed on a pane's saved output (%s)", e)
        return False
    return True


def _logical_lines(rows: Iterable[Line]) -> Iterator[str]:
    """Each line as the program wrote it: the rows the terminal wrapped it into, joined."""
    unwrapper = TextUnwrapper()
    parts: list[str] = []
    for row in rows:
        wrapped = unwrapper.push(row) is None
        parts.append(_row_text(row, keep_trailing_blanks=wrapped))
        if not wrapped:
            yield "".join(parts)
            parts = []
    if parts:
        yield "".join(parts)


def _row_text(row: Line, *, keep_trailing_blanks: bool) -> str:
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


def _is_blank(row: Line) -> bool:
    return row.is_empty() or not _row_text(row, keep_trailing_blanks=False)


def _sgr(pen: Pen) -> str:
    """SGR that sets exactly `pen` from any state (it starts with a reset)."""
    params = ["0"]
    if pen.foreground is not None:
        params.append(_colour(pen.foreground, base=30, bright=90, extended=38))
    if pen.background is not None:
        params.append(_colour(pen.background, base=40, bright=100, extended=48))
    for on, code in (
        (pen.bold, "1"),
        (pen.faint, "2"),
        (pen.italic, "3"),
        (pen.underline, "4"),
        (pen.blink, "5"),
        (pen.inverse, "7"),
        (pen.strikethrough, "9"),
    ):
        if on:
            params.append(code)
    return "\x1b[" + ";".join(params) + "m"


def _colour(colour: Color, *, base: int, bright: int, extended: int) -> str:
    if isinstance(colour, Color.RGB):
        return f"{extended};2;{colour[0]};{colour[1]};{colour[2]}"
    assert isinstance(colour, Color.Indexed)
    index = colour[0]
    if index < 8:
        return str(base + index)
    if index < 16:
        return str(bright + index - 8)
    return f"{extended};5;{index}"


def _last_fitting(lines: list[str], max_bytes: int) -> bytes:
    """The last lines that fit in `max_bytes` together, each with its CR LF."""
    kept: list[bytes] = []
    size = 0
    for line in reversed(lines):
        encoded = line.encode("utf-8", errors="replace") + b"\r\n"
        if size + len(encoded) > max_bytes:
            break
        kept.append(encoded)
        size += len(encoded)
    kept.reverse()
    return b"".join(kept)


def wrap_words(text: str, cols: int) -> list[str]:
    """`text` as rows of at most `cols` cells, broken at spaces (a word is broken only when
    longer than a row) and at its own line breaks: a terminal left to wrap it would cut
    words anywhere."""
    rows: list[str] = []
    for paragraph in text.replace("\r\n", "\n").split("\n"):
        wrapped = wcwidth.wrap(paragraph, max(cols, 1), break_on_hyphens=False)
        rows.extend(wrapped or [""])
    return rows
