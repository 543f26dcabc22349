"""Every JSON file mux reads from disk, read one way: bounded before it is parsed.

A file in `<state>` or `<runtime>` may be anything a crash, a full disk, another
program or a careless hand left there. The reader refuses, with what is wrong,
before any of it can cost more than the bound of its kind: more bytes than the
kind may have (at most that many + 1 are read), anything but a regular file (a
FIFO would block the start), bytes that are not UTF-8, nesting deeper than the
kind's (checked by a scan that does not recurse, before the parser that does),
numbers outside 64 bits or not finite (Python's int() refuses 4,300+ digits
with a ValueError of its own), strings that are not Unicode (lone surrogates),
and a top that is not an object. Every refusal is one `MalformedJson`; each
caller turns it into its documented outcome (quarantine, or logged and ignored).
"""

import errno
import json
import math
import os
import re
import stat
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any, NoReturn

KIB = 1024
MIB = 1024 * KIB
DEFAULT_MAX_DEPTH = 32
INT_MIN = -(2**63)  # the widest integers D-Bus has: int64 ...
INT_MAX = 2**64 - 1  # ... and uint64
_LONGEST_INT = len(str(INT_MIN))  # longer text is out of range without converting it

# A JSON string, ending at its closing quote or, in a truncated file, at the end: the
# pattern matches from every quote, so a scan never starts over (linear time).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*\\?(?:"|\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


@dataclass(frozen=True)
class JsonFileKind:
    """One kind of file: its name in messages ("the session snapshot") and its bounds."""

    name: str
    max_bytes: int
    max_depth: int = DEFAULT_MAX_DEPTH


class MalformedJson(ValueError):
    """The file is not a JSON object mux may use; `problem` says what is wrong."""

    def __init__(self, kind: JsonFileKind, problem: str) -> None:
        super().__init__(f"{kind.name}: {problem}")
        self.kind = kind
        self.problem = problem


class _OutOfRange(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def read_json_object(path: Path, kind: JsonFileKind) -> dict[str, Any]:
    """The object in `path`. FileNotFoundError when there is none; OSError when it
    cannot be read (a directory: EISDIR); MalformedJson for anything else wrong."""
    # O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    with open(fd, "rb") as file:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise MalformedJson(kind, "it is not a regular file")
        data = file.read(kind.max_bytes + 1)
    return parse_json_object(data, kind)


def parse_json_object(data: bytes, kind: JsonFileKind) -> dict[str, Any]:
    """The object `data` holds, within `kind`'s bounds; MalformedJson otherwise."""
    if len(data) > kind.max_bytes:
        _refuse(kind, f"it is larger than {kind.max_bytes} bytes, the most mux reads of it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        _refuse(kind, f"it is not UTF-8 text (byte {e.start})")
    if nesting(text) > kind.max_depth:
        _refuse(kind, f"it is nested deeper than {kind.max_depth} levels")
    try:
        value = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_not_a_number)
    except _OutOfRange as e:
        _refuse(kind, f"it holds a number out of range ({_preview(e.text)})")
    except json.JSONDecodeError as e:
        _refuse(kind, f"it is not valid JSON ({e.msg}: line {e.lineno} column {e.colno})")
    if not isinstance(value, dict):
        _refuse(kind, f"it is not a JSON object (it is {_what(value)})")
    # UTF-8 text decodes to no surrogate: only a \uD800-\uDFFF escape makes one, so
    # text without such an escape (the usual case) needs no walk of every string.
    if _SURROGATE_ESCAPE.search(text) and not _all_unicode(value):
        _refuse(kind, "it holds a string that is not Unicode (a lone surrogate)")
    return value


def nesting(text: str) -> int:
    """How deep the arrays and objects of JSON `text` nest, without recursing (and
    without parsing: brackets inside strings do not count)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)


def _refuse(kind: JsonFileKind, problem: str) -> NoReturn:
    raise MalformedJson(kind, problem) from None


def _int(text: str) -> int:
    if len(text) > _LONGEST_INT:
        raise _OutOfRange(text)
    value = int(text)
    if not INT_MIN <= value <= INT_MAX:
        raise _OutOfRange(text)
    return value


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _OutOfRange(text)
    return value


def _not_a_number(text: str) -> NoReturn:
    raise _OutOfRange(text)  # NaN, Infinity, -Infinity: Python's extension, not JSON


def _preview(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:12]}…, {len(text)} characters"


def _what(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return "a number"


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _all_unicode(value: object) -> bool:
    """No string (key or value) holds a lone surrogate, which no UTF-8 writer, D-Bus
    included, would take later. A walk with a stack of its own (the depth is bounded,
    but the width is not)."""
    to_visit = [value]
    while to_visit:
        item = to_visit.pop()
        if isinstance(item, dict):
            to_visit.extend(item.keys())
            to_visit.extend(item.values())
        elif isinstance(item, list):
            to_visit.extend(item)
        elif isinstance(item, str) and not item.isascii():
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return False
    return True
