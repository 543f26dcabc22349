"""A question on the window view's bottom row: y/n before a command that loses work (`x`
closes a pane, `&` a window), as tmux's confirm-before, or a line of text to type (`,`
renames the window, `:` a command), as tmux's command prompt; or what a command says
(a notice), until a key. Pure: keys in, the answer and bytes to draw out."""

from collections.abc import Callable
from dataclasses import dataclass

from mux.protocol.visible import visible

MAX_ANSWER_CHARS = 256  # (a window title is a line)


@dataclass(frozen=True)
class Asked:
    """What is asked: `text`, and for a typed answer (`typed`), the answer to start from;
    a `notice` only says `text`, and any key takes it away."""

    text: str
    typed: bool = False
    initial: str = ""
    notice: bool = False


class Question:
    def __init__(self) -> None:
        self._asked = Asked("")
        self._answer = ""
        self._action: Callable[[str], None] | None = None

    def pending(self) -> bool:  # (a method: its answer changes as keys come)
        return self._action is not None

    @property
    def typed(self) -> str:
        """The answer as typed so far."""
        return self._answer

    def ask(self, asked: Asked, action: Callable[[str], None]) -> None:
        """Ask; `action` is what the answer does (y/n: only `y`, with "y")."""
        self._asked, self._answer, self._action = asked, asked.initial, action

    def answer(self, keys: bytes) -> Callable[[], None] | None:
        """The keys typed while asked: what the answer does once it is given, else None.
        y/n: the first key answers (`y` does it, any other does not). Typed: Enter
        gives the line, Escape or Ctrl-C gives up, Backspace and Ctrl-U edit it."""
        action = self._action
        if action is None:
            return None
        if not self._asked.typed:
            self._action = None
            yes = keys[:1] in (b"y", b"Y") and not self._asked.notice
            return (lambda: action("y")) if yes else None
        for char in keys.decode(errors="replace"):
            if char in "\r\n":
                self._action, answer = None, self._answer
                return lambda: action(answer)
            if char in "\x1b\x03\x07":
                self._action = None
                return None
            if char in "\x7f\x08":
                self._answer = self._answer[:-1]
            elif char == "\x15":
                self._answer = ""
            elif char.isprintable() and len(self._answer) < MAX_ANSWER_CHARS:
                self._answer += char
        return None

    def overlay(self, rows: int, cols: int) -> bytes:
        """The question (and the answer being typed) drawn on the bottom row in reverse
        video; the cursor put back where it was, or for a typed answer, after it.
        Nothing when none is asked."""
        if self._action is None:
            return b""
        line = visible(self._asked.text + self._answer)[: max(cols - 1, 0)]
        drawn = f"\x1b[{rows};1H\x1b[0;7m{line}\x1b[0m\x1b[K"
        if self._asked.typed:
            return f"{drawn}\x1b[{rows};{len(line) + 1}H\x1b[?25h".encode()
        return f"\x1b7{drawn}\x1b8".encode()
