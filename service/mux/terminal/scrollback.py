"""A bounded ring of a pane's raw output bytes.

History is kept as bytes, not emulator lines: 2000 emulated lines cost about
4 MiB, the same history as bytes a few hundred KiB. Memory is allocated as
output arrives, so an idle pane costs nothing here (not even an empty deque:
0.75 KiB).
"""

from collections import deque


class Scrollback:
    __slots__ = ("_chunks", "_limit", "_size", "total")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._chunks: deque[bytes] | None = None  # made by the first output
        self._size = 0
        self.total = 0  # bytes ever appended: an offset clients can resume from

    @classmethod
    def restored(cls, limit: int, contents: bytes, total: int) -> "Scrollback":
        ring = cls(limit)
        ring.append(contents)
        ring.total = total
        return ring

    def __len__(self) -> int:
        return self._size

    def append(self, data: bytes) -> None:
        self.total += len(data)
        if self._limit <= 0 or not data:
            return
        if self._chunks is None:
            self._chunks = deque()
        if len(data) >= self._limit:
            self._chunks.clear()
            self._chunks.append(data[-self._limit :])
            self._size = self._limit
            return
        self._chunks.append(data)
        self._size += len(data)
        while self._size > self._limit:
            excess = self._size - self._limit
            head = self._chunks[0]
            if len(head) <= excess:
                self._chunks.popleft()
                self._size -= len(head)
            else:
                self._chunks[0] = head[excess:]
                self._size -= excess

    def contents(self) -> bytes:
        if self._chunks is None:
            return b""
        data = b"".join(self._chunks)
        # Keep the join so repeated reads do not re-copy many small chunks.
        self._chunks.clear()
        if data:
            self._chunks.append(data)
        return data
