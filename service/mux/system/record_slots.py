"""A record rewritten in place that a crash at any moment leaves readable.

Two memfds are written in turn; each holds a header (magic, sequence number,
length, SHA-256 of the data) and the data. A write that a crash cuts short
spoils only the slot being written, and its checksum says so: the reader takes
the valid slot with the higher sequence number. The fds live in the service
manager's fd store (mux.lifecycle.fd_store), which is what makes them outlive
the process; memfds, so nothing of it is ever on a disk.
"""

import hashlib
import os
import struct
from collections.abc import Iterable

MAGIC = b"MUXR"
_HEADER = struct.Struct("<4sQQ32s")  # magic, sequence, length, sha256
SLOT_NAMES = ("a", "b")


class RecordSlots:
    def __init__(self, fds: tuple[int, int], sequence: int = 0) -> None:
        """`fds`: the two slots' memfds, now owned here; `sequence`: the last written."""
        self.fds = fds
        self._sequence = sequence

    @classmethod
    def create(cls) -> "RecordSlots":
        created = [os.memfd_create(f"mux-record-{name}", os.MFD_CLOEXEC) for name in SLOT_NAMES]
        return cls((created[0], created[1]))

    def write(self, data: bytes) -> None:
        self._sequence += 1
        fd = self.fds[self._sequence % 2]
        header = _HEADER.pack(MAGIC, self._sequence, len(data), hashlib.sha256(data).digest())
        whole = header + data
        written = 0
        while written < len(whole):
            written += os.pwrite(fd, whole[written:], written)
        os.ftruncate(fd, len(whole))

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)


def read_latest(fds: Iterable[int]) -> tuple[bytes, int] | None:
    """The data of the newest intact slot among `fds`, and its sequence number."""
    best: tuple[bytes, int] | None = None
    for fd in fds:
        found = _read_slot(fd)
        if found is not None and (best is None or found[1] > best[1]):
            best = found
    return best


def _read_slot(fd: int) -> tuple[bytes, int] | None:
    try:
        size = os.fstat(fd).st_size
        whole = os.pread(fd, size, 0) if size else b""
    except OSError:
        return None
    if len(whole) < _HEADER.size:
        return None
    magic, sequence, length, digest = _HEADER.unpack_from(whole)
    data = whole[_HEADER.size :]
    if magic != MAGIC or len(data) != length or hashlib.sha256(data).digest() != digest:
        return None
    return data, sequence
