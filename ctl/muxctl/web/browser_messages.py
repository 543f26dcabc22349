"""What a browser's pane page says besides keys, as WebSocket text frames of JSON
(docs/web.md#the-pane-socket): its terminal's size, and that it cannot keep up or can
again. Pure: text in, a message or BadMessage out. Keys and pastes come as binary
frames, the bytes the pane is to read."""

import json
from dataclasses import dataclass
from typing import TypeGuard

from mux.protocol.spawn_options import MAX_COLS, MAX_ROWS

MAX_TEXT = 1024  # a message is a few dozen bytes


class BadMessage(Exception):
    """The page sent what no page of ours sends; the socket is closed with this reason."""


@dataclass(frozen=True)
class SizeChanged:
    rows: int
    cols: int


@dataclass(frozen=True)
class Pause:
    """The browser's terminal has more to draw than it wants: send nothing for now
    (muxd then shows this client the latest screen when it catches up)."""


@dataclass(frozen=True)
class Resume:
    pass


BrowserMessage = SizeChanged | Pause | Resume


def parse(text: str) -> BrowserMessage:
    if len(text) > MAX_TEXT:
        raise BadMessage(f"a message longer than {MAX_TEXT} characters")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise BadMessage("a message that is not JSON") from None
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "pause":
        return Pause()
    if kind == "resume":
        return Resume()
    if kind == "resize":
        return size(value.get("rows"), value.get("cols"))
    raise BadMessage("a message of no known type")


def size(rows: object, cols: object) -> SizeChanged:
    if not (_within(rows, MAX_ROWS) and _within(cols, MAX_COLS)):
        raise BadMessage(f"a size must be 1-{MAX_ROWS} rows and 1-{MAX_COLS} columns")
    return SizeChanged(rows, cols)


def _within(value: object, top: int) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= top
