"""A y/n question on the window view's bottom row before a command that loses work (`x`
closes a pane, `&` a window), as tmux's confirm-before: `y` does it, any other key
does not. Pure: text in, bytes to draw out."""

from collections.abc import Callable

from mux.protocol.visible import visible


class Question:
    def __init__(self) -> None:
        self._text = ""
        self._action: Callable[[], None] | None = None

    @property
    def pending(self) -> bool:
        return self._action is not None

    def ask(self, text: str, action: Callable[[], None]) -> None:
        """Ask `text`; `action` is what `y` does."""
        self._text, self._action = text, action

    def answer(self, keys: bytes) -> Callable[[], None] | None:
        """The keys typed while asked: the action when the first is `y`, else None (and
        the question is gone either way)."""
        action, self._action = self._action, None
        return action if keys[:1] in (b"y", b"Y") else None

    def overlay(self, rows: int, cols: int) -> bytes:
        """The question drawn on the bottom row in reverse video, the cursor put back
        where it was; nothing when none is asked."""
        if self._action is None:
            return b""
        text = visible(self._text)[: max(cols - 1, 0)]
        return f"\x1b7\x1b[{rows};1H\x1b[0;7m{text}\x1b[0m\x1b[K\x1b8".encode()
