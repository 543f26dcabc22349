"""A pane's screen as the overview draws it: each row a list of runs of one pen, with
the colours as CSS understands them (xterm's palette). Pure.

A run is `[text]` in the default pen, else `[text, fg, bg, flags]`: `fg`/`bg` a CSS
colour or "" (the default), `flags` some of "b" bold, "f" faint, "i" italic, "u"
underline, "r" reverse (the page swaps the colours), "s" struck through. Spaces in the
default pen at a row's end are left out.

The rows are read from the emulator's dump (avt's, a few KiB of text and SGR,
written in Rust) rather than cell by cell: walking a screen's cells from Python
costs a hundred times more, and the overview draws a thousand screens a second
(docs/web.md#the-overview). The dump spells the screen row by row: text, SGR
(`ESC [ … m`, which starts from 0), REP (`ESC [ n b`: the last character n more
times), CRLF between rows except where a row wrapped into the next; then, from the
first C1 CSI (U+009B) on, the cursor and modes, which a thumbnail does not need.
"""

import functools
import re
import unicodedata

Run = list[str]
Rows = list[list[Run]]

# xterm's 16 colours (its defaults, as XTerm's resources set them).
_BASE16 = (
    "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
    "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
)  # fmt: skip
_CUBE = (0, 95, 135, 175, 215, 255)
_FLAG_OF_SGR = {"1": "b", "2": "f", "3": "i", "4": "u", "7": "r", "9": "s"}
_FLAG_ORDER = "bfiurs"
_TOKEN = re.compile(r"\x1b\[([0-9;:]*)m|\x1b\[(\d{1,5})b|\r\n")
MAX_REPEAT = 2000  # (a row is at most this wide: mux.protocol.spawn_options.MAX_COLS)


def indexed_colour(index: int) -> str:
    if index < 16:
        return _BASE16[index]
    if index < 232:
        index -= 16
        red, green, blue = _CUBE[index // 36], _CUBE[index // 6 % 6], _CUBE[index % 6]
        return f"#{red:02x}{green:02x}{blue:02x}"
    grey = 8 + 10 * (index - 232)
    return f"#{grey:02x}{grey:02x}{grey:02x}"


def rgb_colour(red: int, green: int, blue: int) -> str:
    return f"#{red & 255:02x}{green & 255:02x}{blue & 255:02x}"


@functools.lru_cache(maxsize=1024)
def _pen(params: str) -> tuple[str, ...]:
    """The style of an SGR's parameters, from the default pen (the dump's start with
    0): () for the default."""
    fg = bg = ""
    flags = set()
    for param in params.split(";"):
        if ":" in param:  # 38:5:N, 38:2:R:G:B (48 the same for the background)
            parts = [int(p) if p.isdigit() else 0 for p in param.split(":")]
            colour = ""
            if len(parts) >= 3 and parts[1] == 5:
                colour = indexed_colour(min(parts[2], 255))
            elif len(parts) >= 5 and parts[1] == 2:
                colour = rgb_colour(*parts[-3:])
            if parts[0] == 38:
                fg = colour
            elif parts[0] == 48:
                bg = colour
        elif param in _FLAG_OF_SGR:
            flags.add(_FLAG_OF_SGR[param])
        elif param.isdigit():
            code = int(param)
            if 30 <= code <= 37:
                fg = _BASE16[code - 30]
            elif 90 <= code <= 97:
                fg = _BASE16[code - 82]
            elif 40 <= code <= 47:
                bg = _BASE16[code - 40]
            elif 100 <= code <= 107:
                bg = _BASE16[code - 92]
    flag_text = "".join(f for f in _FLAG_ORDER if f in flags)
    return (fg, bg, flag_text) if fg or bg or flag_text else ()


def _width(text: str) -> int:
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


class _Rows:
    """The rows being read: runs of the current row, its width so far."""

    def __init__(self, cols: int) -> None:
        self.cols = cols
        self.rows: Rows = []
        self.runs: list[Run] = []
        self.width = 0
        self.style: tuple[str, ...] = ()
        self.run_style: tuple[str, ...] = ()  # the last run's
        self.last = ""  # the last character written (REP repeats it)

    def text(self, text: str) -> None:
        if not text:
            return
        if text.isascii() and self.width + len(text) <= self.cols:  # (most text)
            self._append(text, len(text))
            return
        while text:
            if self.width >= self.cols:  # (it wrapped: the rest is the next row's)
                self.end_row()
            room = self.cols - self.width
            part = text if _width(text) <= room else _fitting(text, room)
            if not part:  # (a wide character with one column left: it wraps)
                self.end_row()
                continue
            self._append(part, _width(part))
            text = text[len(part) :]

    def _append(self, part: str, width: int) -> None:
        if self.runs and self.run_style == self.style:
            self.runs[-1][0] += part
        else:
            self.runs.append([part, *self.style])
            self.run_style = self.style
        self.width += width
        self.last = part[-1]

    def end_row(self) -> None:
        runs = self.runs
        if runs and len(runs[-1]) == 1:  # (trailing default spaces: nothing to draw)
            trimmed = runs[-1][0].rstrip(" ")
            if trimmed:
                runs[-1] = [trimmed]
            else:
                runs.pop()
        self.rows.append(runs)
        self.runs, self.width = [], 0


def _fitting(text: str, room: int) -> str:
    width = 0
    for end, char in enumerate(text):
        width += _width(char)
        if width > room:
            return text[:end]
    return text


def rows_of_dump(dump: str, rows: int, cols: int) -> Rows:
    """The `rows` rows of a screen `cols` wide from its dump."""
    body = dump.split("\x9b", 1)[0]
    reader = _Rows(max(1, cols))
    at = 0
    for token in _TOKEN.finditer(body):
        if token.start() > at:
            reader.text(body[at : token.start()])
        at = token.end()
        sgr, repeat = token.group(1), token.group(2)
        if sgr is not None:
            reader.style = _pen(sgr)
        elif repeat is not None:
            reader.text(reader.last * min(int(repeat), MAX_REPEAT))
        else:
            reader.end_row()
    if at < len(body):
        reader.text(body[at:])
    if reader.runs or reader.width:
        reader.end_row()
    shown = reader.rows[:rows]
    return shown + [[] for _ in range(rows - len(shown))]
