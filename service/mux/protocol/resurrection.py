"""The `application-resurrection/1` protocol, messages without any I/O
(docs/resurrection-protocol.md#messages).

One UTF-8 JSON object a line, at most MAX_LINE bytes with its newline. The
host side (the service) reads a hello, answers exactly one of a restore offer
or an error, then takes checkpoints and clears; the client side (the library
in mux.resurrection.client) is the mirror image. A line that breaks the rules
is a `Violation` carrying the error code the host answers with (every malformed
line: not UTF-8, not JSON, nested too deep, a number too long to read, a string
that is not text, a value of the wrong type); success and
rejection are mutually exclusive by construction (one answer per hello).
Clients fail closed on codes they do not know.
"""

import json
from dataclasses import dataclass
from enum import StrEnum

from mux.protocol.visible import is_text

PROTOCOL = "application-resurrection/1"
MAX_LINE = 65536  # bytes, the newline included
MAX_REFERENCE = 4096  # bytes of UTF-8
MAX_APPLICATION = 256


class ErrorCode(StrEnum):
    INVALID_HANDSHAKE = "invalid_handshake"
    OWNERSHIP_VERIFICATION_UNAVAILABLE = "ownership_verification_unavailable"
    OWNERSHIP_REJECTED = "ownership_rejected"
    LAUNCH_UNAVAILABLE = "launch_unavailable"
    CHECKPOINT_FAILED = "checkpoint_failed"


class Violation(Exception):
    """The peer broke the protocol; the host answers `code` and closes."""

    def __init__(self, code: ErrorCode, why: str) -> None:
        super().__init__(why)
        self.code = code


class LineDecoder:
    """Bytes in, lines out. Every line it holds, the unterminated tail included, is at
    most `max_line` bytes with its newline (docs/resurrection-protocol.md#messages): data
    that would make any line longer is refused whole before it is buffered."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self._max_line = max_line
        self._buffer = bytearray()
        self._tail = 0  # bytes after the last newline in the buffer (a line not yet ended)

    def receive_data(self, data: bytes) -> None:
        """Violation (and nothing kept) if a line in `data` would be too long."""
        length = self._tail  # of the line being checked, without its newline
        start = 0
        while (newline := data.find(b"\n", start)) >= 0:
            length += newline - start
            if length >= self._max_line:  # with its newline it is over max_line
                self._refuse()
            length, start = 0, newline + 1
        length += len(data) - start
        if length >= self._max_line:  # even its newline would not fit any more
            self._refuse()
        self._buffer += data
        self._tail = length

    def _refuse(self) -> None:
        self._buffer.clear()
        self._tail = 0
        raise Violation(ErrorCode.INVALID_HANDSHAKE, f"a line longer than {self._max_line} bytes")

    def next_line(self) -> bytes | None:
        newline = self._buffer.find(b"\n")
        if newline < 0:
            return None
        line = bytes(self._buffer[:newline])
        del self._buffer[: newline + 1]
        return line

    @property
    def pending(self) -> int:
        return len(self._buffer)


def _object(line: bytes) -> dict[str, object]:
    try:
        value = json.loads(line.decode("utf-8"))
    # ValueError: not UTF-8, not JSON, or an integer longer than Python converts;
    # RecursionError: nested deeper than the parser goes.
    except (ValueError, RecursionError):
        raise Violation(ErrorCode.INVALID_HANDSHAKE, "a line that is not UTF-8 JSON") from None
    if not isinstance(value, dict):
        raise Violation(ErrorCode.INVALID_HANDSHAKE, "a line that is not a JSON object")
    return value


def _encode(message: dict[str, object]) -> bytes:
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    if len(data) > MAX_LINE:
        raise ValueError(f"a message of {len(data)} bytes is longer than {MAX_LINE}")
    return data


def _reference(value: object) -> str:
    if not is_text(value):
        raise Violation(ErrorCode.INVALID_HANDSHAKE, "a reference that is not a string")
    if len(value.encode()) > MAX_REFERENCE:
        raise Violation(ErrorCode.INVALID_HANDSHAKE, f"a reference over {MAX_REFERENCE} bytes")
    return value


# -- host side ----------------------------------------------------------------------


def parse_hello(line: bytes) -> str:
    """The application's name from a client's hello."""
    message = _object(line)
    hello = message.get("hello")
    if message.get("protocol") != PROTOCOL or not isinstance(hello, dict) or len(message) != 2:
        raise Violation(ErrorCode.INVALID_HANDSHAKE, "not an application-resurrection/1 hello")
    application = hello.get("application")
    if not is_text(application) or not 0 < len(application) <= MAX_APPLICATION:
        raise Violation(ErrorCode.INVALID_HANDSHAKE, "a hello without an application name")
    return application


@dataclass(frozen=True)
class Checkpoint:
    reference: str


@dataclass(frozen=True)
class Clear:
    pass


def parse_request(line: bytes) -> Checkpoint | Clear:
    message = _object(line)
    if len(message) != 1:
        raise Violation(ErrorCode.INVALID_HANDSHAKE, "a request with more than one member")
    ((kind, body),) = message.items()
    if kind == "checkpoint" and isinstance(body, dict) and set(body) == {"reference"}:
        return Checkpoint(_reference(body["reference"]))
    if kind == "clear" and body == {}:
        return Clear()
    raise Violation(ErrorCode.INVALID_HANDSHAKE, f"an unknown request {kind!r}")


def restore_offer(reference: str | None) -> bytes:
    restore = None if reference is None else {"reference": reference}
    return _encode({"protocol": PROTOCOL, "restore": restore})


def rejection(code: ErrorCode) -> bytes:
    """The one answer to a hello that is refused (the host then closes)."""
    return _encode({"protocol": PROTOCOL, "error": {"code": str(code)}})


def checkpointed(generation: int) -> bytes:
    return _encode({"checkpointed": {"generation": generation}})


def cleared() -> bytes:
    return _encode({"cleared": {}})


def request_error(code: ErrorCode) -> bytes:
    """The answer to a request after the hello that cannot be served."""
    return _encode({"error": {"code": str(code)}})


def checkpoint_failed() -> bytes:
    return request_error(ErrorCode.CHECKPOINT_FAILED)


# -- client side --------------------------------------------------------------------


class Refused(Exception):
    """The host refused (or answered something this client does not understand)."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def hello(application: str) -> bytes:
    return _encode({"protocol": PROTOCOL, "hello": {"application": application}})


def checkpoint_request(reference: str) -> bytes:
    if len(reference.encode()) > MAX_REFERENCE:
        raise ValueError(f"a reference is at most {MAX_REFERENCE} bytes")
    return _encode({"checkpoint": {"reference": reference}})


def clear_request() -> bytes:
    return _encode({"clear": {}})


def _answer(line: bytes) -> dict[str, object]:
    try:
        return _object(line)
    except Violation:
        raise Refused("invalid_answer") from None


def parse_offer(line: bytes) -> str | None:
    """The reference offered back (None: start afresh); Refused otherwise."""
    answer = _answer(line)
    if answer.get("protocol") != PROTOCOL:
        raise Refused("invalid_answer")
    if "error" in answer:
        error = answer["error"]
        code = error.get("code") if isinstance(error, dict) else None
        raise Refused(code if isinstance(code, str) else "invalid_answer")
    restore = answer.get("restore", ...)
    if restore is None:
        return None
    if isinstance(restore, dict) and is_text(reference := restore.get("reference")):
        return reference
    raise Refused("invalid_answer")


def parse_acknowledgement(line: bytes, expected: str) -> int | None:
    """`expected`: "checkpointed" (returns the generation) or "cleared" (None)."""
    answer = _answer(line)
    if "error" in answer:
        error = answer["error"]
        code = error.get("code") if isinstance(error, dict) else None
        raise Refused(code if isinstance(code, str) else "invalid_answer")
    body = answer.get(expected)
    if expected == "cleared" and body == {}:
        return None
    if expected == "checkpointed" and isinstance(body, dict):
        generation = body.get("generation")
        if isinstance(generation, int) and not isinstance(generation, bool):
            return generation
    raise Refused("invalid_answer")
