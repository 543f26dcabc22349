"""Each pane's saved contents: `<state>/contents/<invocation>`, sealed (docs/contents.md).

A file holds what mux.terminal.saved_contents made of one pane's history and screen,
compressed and encrypted with the contents key (mux.system.sealed); the pane's launch
identity (its invocation) is the associated data, so a file renamed to another pane's
name does not open. A file is only ever replaced whole (mux.system.durable renames a
new file over it): the history of snapshots keeps hard links to the files its entries
name (mux.state.history), and those must never change under it. Nothing of a pane's
output is ever written here unsealed.

Every method does blocking I/O: call them off the event loop.
"""

import contextlib
import logging
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from mux.system.durable import durable_write
from mux.system.sealed import OVERHEAD, SealError, open_sealed, seal

log = logging.getLogger(__name__)

# A launch's invocation, as mux makes them (secrets.token_hex(16)); nothing else is ours.
_NAME = re.compile(r"[0-9a-f]{32}")


class ContentsProblem(Exception):
    """A contents file that cannot be used; the message names why (no path)."""


class ContentsStore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @staticmethod
    def is_name(name: str) -> bool:
        return _NAME.fullmatch(name) is not None

    def path(self, invocation: str) -> Path:
        if not self.is_name(invocation):
            raise ValueError(f"not a launch's invocation: {invocation!r}")
        return self.directory / invocation

    def write(self, key: bytes, invocation: str, text: bytes) -> int:
        """Replace the pane's contents with `text`, sealed; the bytes on disk."""
        blob = seal(key, text, invocation.encode())
        durable_write(self.path(invocation), blob)
        return len(blob)

    def read(self, key: bytes, invocation: str, max_bytes: int, path: Path | None = None) -> bytes:
        """The pane's saved contents (b"": none saved); ContentsProblem when the file is
        not a regular file of ours, too large, or does not open with this key for this
        pane. `path`: another file of the same pane (a history entry's)."""
        path = path or self.path(invocation)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return b""
        except OSError as e:
            raise ContentsProblem(f"its saved contents cannot be read ({e.strerror})") from None
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
                raise ContentsProblem("its saved contents are not a file of this user's")
            # Compressed, the contents are smaller than `max_bytes`; a file larger than
            # that plus the seal's frame is not one mux wrote.
            blob = file.read(max_bytes + OVERHEAD + 1)
        if len(blob) > max_bytes + OVERHEAD:
            raise ContentsProblem("its saved contents file is larger than any mux writes")
        try:
            return open_sealed(key, blob, invocation.encode(), max_bytes=max_bytes)
        except SealError as e:
            raise ContentsProblem(f"its saved contents cannot be used: {e}") from None

    def sizes(self) -> dict[str, int]:
        """Every contents file: invocation -> bytes on disk."""
        found: dict[str, int] = {}
        try:
            entries = list(os.scandir(self.directory))
        except FileNotFoundError:
            return found
        for entry in entries:
            if self.is_name(entry.name) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    found[entry.name] = entry.stat(follow_symlinks=False).st_size
        return found

    def remove(self, invocations: Iterable[str]) -> None:
        for invocation in invocations:
            path = self.path(invocation)
            for leftover in (path, path.with_name(f".{path.name}.lock")):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()

    def wipe(self) -> int:
        """Every contents file gone (muxctl forget-contents); how many there were."""
        names = list(self.sizes())
        self.remove(names)
        return len(names)
