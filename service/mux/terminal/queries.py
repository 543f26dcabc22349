"""Questions a program asks its terminal, and the answers mux gives when no terminal is
attached to the pane to give them; no I/O.

Line editors (nushell's reedline, crossterm, ...) ask for the cursor position
(DSR 6) and wait for the answer before they draw a prompt; some programs ask
what the terminal is (DA1) or whether it is well (DSR 5). A real terminal
answers on the program's input. mux's emulator is the terminal while nobody is
attached; when someone is, their terminal sees the question in the stream and
answers it itself, so mux stays quiet (two answers would be one too many).

A question split across two reads is not seen (rare: a program writes the
few bytes of a query at once).
"""

import re
from dataclasses import dataclass
from enum import Enum

QUERY = re.compile(rb"\x1b\[(6n|5n|0?c)")


class Query(Enum):
    CURSOR_POSITION = b"6n"
    STATUS = b"5n"
    DEVICE_ATTRIBUTES = b"c"


@dataclass(frozen=True)
class Found:
    end: int  # just after the query: the cursor position is the one there
    query: Query


def find_queries(data: bytes) -> list[Found]:
    if b"\x1b[" not in data:
        return []
    found = []
    for match in QUERY.finditer(data):
        kind = match.group(1)
        query = Query.DEVICE_ATTRIBUTES if kind.endswith(b"c") else Query(kind)
        found.append(Found(match.end(), query))
    return found


def answer(query: Query, cursor: tuple[int, int]) -> bytes:
    """`cursor`: (row, column), 0-based."""
    if query is Query.CURSOR_POSITION:
        return b"\x1b[%d;%dR" % (cursor[0] + 1, cursor[1] + 1)
    if query is Query.STATUS:
        return b"\x1b[0n"  # "terminal OK"
    return b"\x1b[?1;2c"  # a VT100 with advanced video, as tmux answers
