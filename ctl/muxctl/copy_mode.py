"""Copy mode: the focused pane's history as muxd keeps it, scrolled, searched, and a part
of it selected and copied, with vi- or emacs-style keys as tmux's (`mode_keys`;
docs/windows.md#copy-mode). Pure: key names in (muxctl.key_reader), what to draw and
what was copied out (muxctl.copy_view draws it).

The text is the pane's lines (`GetHistory`: what scrolled off, then the screen), taken
once when copy mode starts: the pane goes on running, and what it prints meanwhile
shows when copy mode ends, as in tmux. Positions are (line, character) in that text;
the view shows `rows` lines from `top`.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from mux.protocol.attach import MAX_PAYLOAD
from mux.protocol.visible import visible

ModeKeys = Literal["vi", "emacs"]
MAX_COPY_BYTES = MAX_PAYLOAD  # pasted in one PASTE frame (more than a terminal's OSC 52 takes)
Position = tuple[int, int]

# Each key and what it does, per style (tmux's copy-mode-vi and copy-mode tables).
_BOTH = {
    "Up": "up",
    "Down": "down",
    "Left": "left",
    "Right": "right",
    "PageUp": "page-up",
    "PageDown": "page-down",
    "Home": "line-start",
    "End": "line-end",
    "Enter": "copy",
    "q": "cancel",
    "n": "search-again",
    "N": "search-reverse",
}
BINDINGS: dict[ModeKeys, dict[str, str]] = {
    "vi": {
        **_BOTH,
        "h": "left",
        "j": "down",
        "k": "up",
        "l": "right",
        "C-u": "half-page-up",
        "C-d": "half-page-down",
        "C-b": "page-up",
        "C-f": "page-down",
        "C-y": "scroll-up",
        "C-e": "scroll-down",
        "g": "top",
        "G": "bottom",
        "0": "line-start",
        "^": "line-start",
        "$": "line-end",
        "H": "view-top",
        "M": "view-middle",
        "L": "view-bottom",
        "w": "word-next",
        "b": "word-previous",
        "/": "search-forward",
        "?": "search-backward",
        " ": "begin-selection",
        "v": "begin-selection",
        "y": "copy",
        "Escape": "clear-or-cancel",
        "C-c": "cancel",
    },
    "emacs": {
        **_BOTH,
        "C-p": "up",
        "C-n": "down",
        "C-b": "left",
        "C-f": "right",
        "M-v": "page-up",
        "C-v": "page-down",
        "M-<": "top",
        "M->": "bottom",
        "C-a": "line-start",
        "C-e": "line-end",
        "M-f": "word-next",
        "M-b": "word-previous",
        "C-s": "search-forward",
        "C-r": "search-backward",
        "C-Space": "begin-selection",
        "M-w": "copy",
        "C-w": "copy",
        "Escape": "clear-or-cancel",
        "C-g": "clear-or-cancel",
    },
}


@dataclass(frozen=True)
class Copied:
    """Copy mode ended with `text` copied."""

    text: str


@dataclass(frozen=True)
class Ended:
    """Copy mode ended, nothing copied."""


class CopyMode:
    def __init__(self, lines: list[str], rows: int, cols: int, mode_keys: ModeKeys) -> None:
        # Shown as `visible` shows text from panes (a control character as an escape a
        # person can read), and copied as shown.
        self.lines = [visible(line) for line in lines] or [""]
        self.rows, self.cols = max(1, rows), max(1, cols)
        self._bindings = BINDINGS[mode_keys]
        last = len(self.lines) - 1
        while last > 0 and not self.lines[last].strip():
            last -= 1  # the blank rows under the last output
        self.cursor: Position = (last, 0)
        self.top = self.bottom_top  # the screen as it is, then what scrolled off above
        self._show(last)
        self.anchor: Position | None = None  # where the selection began
        self.prompt: str | None = None  # a search being typed
        self.prompt_forward = True
        self.search: tuple[str, bool] | None = None  # the last one, and its direction
        self.message = ""  # said on the top row until the next key

    @property
    def bottom_top(self) -> int:
        """`top` when the view shows the last lines."""
        return max(0, len(self.lines) - self.rows)

    def resize(self, rows: int, cols: int) -> None:
        self.rows, self.cols = max(1, rows), max(1, cols)
        self._show(self.cursor[0])

    def scroll(self, lines: int) -> None:
        """The view moved `lines` down (up when negative), the cursor with it: the mouse
        wheel's."""
        before = self.top
        self.top = max(0, min(self.top + lines, self.bottom_top))
        self._place((self.cursor[0] + self.top - before, self.cursor[1]))

    def feed(self, keys: list[str]) -> Copied | Ended | None:
        """The keys typed; how copy mode ended, or None while it goes on."""
        for key in keys:
            self.message = ""
            if self.prompt is not None:
                self._prompt_key(key)
                continue
            action = self._bindings.get(key)
            if action is None:
                continue
            ended = self._act(action)
            if ended is not None:
                return ended
        return None

    # -- the actions --------------------------------------------------------------------

    def _act(self, action: str) -> Copied | Ended | None:
        if action == "cancel" or (action == "clear-or-cancel" and self.anchor is None):
            return Ended()
        if action == "clear-or-cancel":
            self.anchor = None
        elif action == "copy":
            return self._copy()
        elif action == "begin-selection":
            self.anchor = self.cursor
        elif action in ("search-forward", "search-backward"):
            self.prompt, self.prompt_forward = "", action == "search-forward"
        elif action in ("search-again", "search-reverse") and self.search is not None:
            text, forward = self.search
            self._find(text, forward if action == "search-again" else not forward)
        else:
            self._move(action)
        return None

    def _move(self, action: str) -> None:
        line, col = self.cursor
        last = len(self.lines) - 1
        half = max(1, self.rows // 2)
        moves: dict[str, Callable[[], Position]] = {
            "up": lambda: (line - 1, col),
            "down": lambda: (line + 1, col),
            "left": lambda: (line, col - 1),
            "right": lambda: (line, col + 1),
            "line-start": lambda: (line, 0),
            "line-end": lambda: (line, max(0, len(self.lines[line]) - 1)),
            "top": lambda: (0, 0),
            "bottom": lambda: (last, 0),
            "view-top": lambda: (self.top, 0),
            "view-middle": lambda: (self.top + self.rows // 2, 0),
            "view-bottom": lambda: (self.top + self.rows - 1, 0),
            "word-next": lambda: self._word(forward=True),
            "word-previous": lambda: self._word(forward=False),
        }
        scrolls = {
            "page-up": -self.rows,
            "page-down": self.rows,
            "half-page-up": -half,
            "half-page-down": half,
            "scroll-up": -1,
            "scroll-down": 1,
        }
        if action in scrolls and action.startswith("scroll"):
            self.scroll(scrolls[action])  # the view moves and the cursor with it, as in tmux
        elif action in scrolls:  # a page: the cursor a page on, the view as far as it goes
            step = scrolls[action]
            self.top = max(0, min(self.top + step, self.bottom_top))
            self._place((line + step, col))
        elif action in moves:
            self._place(moves[action]())

    def _place(self, position: Position) -> None:
        line = max(0, min(position[0], len(self.lines) - 1))
        col = max(0, min(position[1], max(0, len(self.lines[line]) - 1)))
        self.cursor = (line, col)
        self._show(line)

    def _show(self, line: int) -> None:
        """Scroll as little as shows `line`."""
        if line < self.top:
            self.top = line
        elif line >= self.top + self.rows:
            self.top = line - self.rows + 1
        self.top = max(0, min(self.top, self.bottom_top))

    def _word(self, forward: bool) -> Position:
        """The start of the next (or this or the previous) word, across lines."""
        line, col = self.cursor
        text = self.lines[line]
        if forward:
            while col < len(text) and not text[col].isspace():
                col += 1
            while True:
                while col < len(text) and text[col].isspace():
                    col += 1
                if col < len(text) or line == len(self.lines) - 1:
                    return (line, col)
                line, col, text = line + 1, 0, self.lines[line + 1]
        col -= 1
        while True:
            while col >= 0 and (col >= len(text) or text[col].isspace()):
                col -= 1
            if col >= 0 or line == 0:
                break
            line -= 1
            text = self.lines[line]
            col = len(text) - 1
        while col > 0 and not text[col - 1].isspace():
            col -= 1
        return (line, max(col, 0))

    # -- search -------------------------------------------------------------------------

    def _prompt_key(self, key: str) -> None:
        assert self.prompt is not None
        if key == "Enter":
            text, self.prompt = self.prompt, None
            if text:
                self.search = (text, self.prompt_forward)
                self._find(text, self.prompt_forward)
        elif key in ("Escape", "C-c", "C-g"):
            self.prompt = None
        elif key == "BSpace":
            self.prompt = self.prompt[:-1]
        elif len(key) == 1 and key.isprintable():
            self.prompt += key

    def _find(self, text: str, forward: bool) -> None:
        """The cursor to the next match of `text` that way, round the end (as tmux);
        lower case matches either case (as vim's smartcase)."""
        fold = text == text.lower()
        needle = text.lower() if fold else text
        count = len(self.lines)
        line, col = self.cursor
        for step in range(count + 1):
            index = (line + step if forward else line - step) % count
            haystack = self.lines[index].lower() if fold else self.lines[index]
            if forward:
                start = col + 1 if step == 0 else 0
                found = haystack.find(needle, start)
            else:
                end = col + len(needle) - 1 if step == 0 else len(haystack)
                found = haystack.rfind(needle, 0, max(0, end))
            if found >= 0:
                self.cursor = (index, found)
                self._show(index)
                return
        self.message = f"not found: {text}"

    def matches(self, line: int) -> list[tuple[int, int]]:
        """Where the last search's text is on `line`: (start, end) character indexes."""
        if self.search is None:
            return []
        text = self.search[0]
        fold = text == text.lower()
        haystack = self.lines[line].lower() if fold else self.lines[line]
        needle = text.lower() if fold else text
        found: list[tuple[int, int]] = []
        at = haystack.find(needle)
        while at >= 0 and len(found) < 200:
            found.append((at, at + len(needle)))
            at = haystack.find(needle, at + len(needle))
        return found

    # -- the selection ------------------------------------------------------------------

    def selection(self) -> tuple[Position, Position] | None:
        """The first and last character selected (both taken), in order."""
        if self.anchor is None:
            return None
        return (min(self.anchor, self.cursor), max(self.anchor, self.cursor))

    def _copy(self) -> Copied | Ended | None:
        chosen = self.selection()
        if chosen is None:
            return Ended()  # nothing selected: copy mode ends, nothing copied
        (first_line, first_col), (last_line, last_col) = chosen
        parts = []
        for line in range(first_line, last_line + 1):
            text = self.lines[line]
            start = first_col if line == first_line else 0
            end = last_col + 1 if line == last_line else len(text)
            parts.append(text[start:end])
        copied = "\n".join(parts)
        if len(copied.encode()) > MAX_COPY_BYTES:
            self.message = f"not copied: the selection is over {MAX_COPY_BYTES >> 20} MiB"
            return None
        return Copied(copied)
