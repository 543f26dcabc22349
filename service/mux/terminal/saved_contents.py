"""What of a pane's output is saved as its contents, and text laid out to a pane's width; no I/O.

A pane's contents (SPEC §13) are the last lines of its history and its screen as text
with SGR attributes only (colours, bold, dim, italic, underline, blink, reverse,
strikethrough) and CR LF: written into a fresh terminal, or into a new pane, they show
the old lines scrolled up with their colours and can change nothing else. Saved output
is a file's text at the next start, and a program's output is anything at all, so every
other control is dropped: no alternate screen, cursor move, mode, title, hyperlink,
clipboard write (OSC 52), question that makes a terminal answer (DA, DSR), C1 control
or BEL.

The text is made from the emulator's rows (mux.terminal.styled_rows), not from the raw
bytes: the history is fed into a scratch emulator whose scrollback keeps `max_lines`
lines (about 4 MiB for 2000, only while the contents are made, which is on a worker,
not the event loop), and the screen comes from the pane's own emulator (its dump), which
has seen all of its output. A full-screen program (vim, less, htop in the alternate
screen) leaves the lines below it in the primary screen and what it shows as the last
screenful. A line the terminal wrapped is written without CR LF at its wrap, so a
narrower or wider pane lays it out again like the program's own output.
"""

import codecs
import logging
from collections.abc import Iterable, Iterator

import wcwidth
from avt._avt import Line, Vt

# avt re-exports these without declaring them; their typed home is avt._avt.
from mux.protocol.combining import composed
from mux.protocol.dec_graphics import GraphicsTranslator
from mux.terminal.styled_rows import SGR_RESET, row_text, styled_rows

log = logging.getLogger(__name__)

__all__ = ["SGR_RESET", "contents_of", "wrap_words"]

FEED_SLICE_CHARS = 16384  # avt is slower on very long strings (mux.terminal.screen)
# How avt's dump enters the alternate screen (it writes CSI as the C1 control or as ESC [).
_ALTERNATE_SCREEN_MARKS = ("\x9b?1047h", "\x1b[?1047h")
# Leaves the alternate screen if a scratch emulator is in it: its primary screen and
# scrollback are the lines scrolled up before the full-screen program started.
_LEAVE_ALTERNATE_SCREEN = "\x1b[?1049l"
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
    shown = styled_rows(screen, screen.view())
    if alternate:  # a full-screen program's screen starts a line of its own
        lines = [*_logical_lines(earlier), *_logical_lines(shown)]
    else:  # a line wrapped at the screen's top goes on in the screen
        lines = list(_logical_lines([*earlier, *shown]))
    while lines and not lines[-1]:
        lines.pop()
    return _last_fitting(lines, max_bytes)


def _history_rows(
    history: bytes, rows: int, cols: int, *, max_lines: int, cut: bool, alternate: bool
) -> list[tuple[str, bool]]:
    """The rows above the screen as (text, wrapped): scrolled off it, and in the alternate
    screen's case the primary screen's rows too (what the full-screen program covers),
    trailing blanks out."""
    if max_lines <= 0 or not history:
        return []
    if cut:
        history = history[history.find(b"\n") + 1 :] if b"\n" in history else b""
    scratch = Vt(cols, rows, scrollback_limit=max_lines)
    # As the pane's screen was fed (mux.terminal.screen): xterm's DEC graphics glyphs,
    # combining marks composed.
    text = composed(GraphicsTranslator().translate(codecs.decode(history, "utf-8", "replace")))
    if not _fed(scratch, text + _LEAVE_ALTERNATE_SCREEN):
        return []
    lines = scratch.lines()
    texts = styled_rows(scratch, lines)
    if not alternate:
        return texts[: len(lines) - rows]  # the screen itself comes from the pane's emulator
    while texts and _is_blank(texts[-1], lines[len(texts) - 1]):
        texts.pop()
    return texts[-max_lines:]


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


def _logical_lines(rows: Iterable[tuple[str, bool]]) -> Iterator[str]:
    """Each line as the program wrote it: the rows the terminal wrapped it into, joined."""
    parts: list[str] = []
    for text, wrapped in rows:
        parts.append(text)
        if not wrapped:
            yield "".join(parts)
            parts = []
    if parts:
        yield "".join(parts)


def _is_blank(row: tuple[str, bool], line: Line) -> bool:
    text, wrapped = row
    return not (row_text(line, keep_trailing_blanks=False) if wrapped else text)


def _last_fitting(lines: list[str], max_bytes: int) -> bytes:
    """The last lines that fit in `max_bytes` together, each with its CR LF."""
    if lines:  # all of them, usually: one encoding rather than one a line
        whole = ("\r\n".join(lines) + "\r\n").encode("utf-8", errors="replace")
        if len(whole) <= max_bytes:
            return whole
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


def last_lines(contents: bytes, count: int, max_bytes: int) -> bytes:
    """The last `count` lines of saved contents (CR LF between lines), at most
    `max_bytes` of them: whole lines only, so no SGR or character is cut."""
    lines = contents.rstrip(b"\r\n").split(b"\r\n")[-count:] if count > 0 else []
    kept: list[bytes] = []
    size = 0
    for line in reversed(lines):
        size += len(line) + 2
        if size > max_bytes:
            break
        kept.append(line)
    return b"\r\n".join(reversed(kept))
