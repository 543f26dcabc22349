"""The attach protocol on `<runtime>/mux.sock`: frames, without any I/O
(docs/attach-protocol.md#frames).

Every frame is a 1-byte type, a 4-byte big-endian payload length, and the
payload; a payload is at most MAX_PAYLOAD bytes, HELLO's and WELCOME's at most
MAX_HELLO, and a frame of a fixed shape declares exactly its size (any other
declared length is a protocol error, found before anything is buffered). Every
malformed payload (not UTF-8, not JSON, nested too deep, a number too long to
read or out of range, a value of the wrong type) is a ProtocolError, which the
service answers with ERROR `ProtocolError`. The codec is a pure
object in the manner of h11: feed bytes with `receive_data`, take frames with
`next_frame`, turn frames into bytes with `encode`. Which frame may come when
is `mux.protocol.attach_conversation`'s business.
"""

import json
import struct
from dataclasses import astuple, dataclass
from enum import IntEnum
from typing import ClassVar, TypeGuard

from mux.protocol.visible import is_text

PROTOCOL_VERSION = 1
MAX_PAYLOAD = 1 << 20
# A HELLO is a few dozen bytes: a bound this small keeps connections that have not said
# HELLO yet (attach_max_pending of them) from making the service buffer much.
MAX_HELLO = 1 << 16
MAX_STATUS = 1 << 14  # one line of text
HEADER = struct.Struct(">BI")
# Numbers in HELLO and WELCOME: a descriptor and a version fit in 31 bits.
MAX_NUMBER = (1 << 31) - 1


class ProtocolError(Exception):
    """The peer broke the framing or the conversation; the connection is to be closed."""


class FrameType(IntEnum):
    # client -> service
    HELLO = 0x01
    ATTACH = 0x02
    INPUT = 0x03
    RESIZE = 0x04
    DETACH = 0x05
    PASTE = 0x06
    STATUS = 0x07
    # service -> client
    WELCOME = 0x81
    ATTACHED = 0x82
    OUTPUT = 0x83
    REPAINT = 0x84
    EXITED = 0x85
    ERROR = 0x86
    DETACHED = 0x87


@dataclass(frozen=True)
class Frame:
    kind: ClassVar[FrameType]

    @classmethod
    def check_length(cls, length: int) -> None:
        """ProtocolError unless a payload of `length` bytes may follow (from the header)."""
        if length:
            raise ProtocolError(f"{cls.kind.name} carries no payload")

    def payload(self) -> bytes:
        return b""

    @classmethod
    def parse(cls, payload: bytes) -> "Frame":
        if payload:
            raise ProtocolError(f"{cls.kind.name} carries no payload")
        return cls()


@dataclass(frozen=True)
class _Json(Frame):
    """Frames whose payload is one JSON object, in UTF-8."""

    MAX_LENGTH: ClassVar[int] = MAX_PAYLOAD

    @classmethod
    def check_length(cls, length: int) -> None:
        if length > cls.MAX_LENGTH:
            raise ProtocolError(
                f"a {cls.kind.name} of {length} bytes is larger than {cls.MAX_LENGTH}"
            )

    @classmethod
    def _object(cls, payload: bytes) -> dict[str, object]:
        try:
            value = json.loads(payload.decode("utf-8"))
        # ValueError: not UTF-8, not JSON, or an integer longer than Python converts;
        # RecursionError: nested deeper than the parser goes.
        except (ValueError, RecursionError):
            raise ProtocolError(f"{cls.kind.name}: the payload is not JSON") from None
        if not isinstance(value, dict):
            raise ProtocolError(f"{cls.kind.name}: the payload is not a JSON object")
        return value


@dataclass(frozen=True)
class _Versioned(_Json):
    """HELLO and WELCOME: a JSON object with the protocol version, and what each side
    offers (keys a side does not know are ignored, so either may add one)."""

    version: int = PROTOCOL_VERSION
    MAX_LENGTH = MAX_HELLO

    @classmethod
    def _version(cls, value: dict[str, object]) -> int:
        version = value.get("version")
        if not _whole_number(version):
            raise ProtocolError(
                f"{cls.kind.name}: version must be a whole number from 0 to {MAX_NUMBER}"
            )
        return version


def _whole_number(value: object) -> TypeGuard[int]:
    """An int from 0 to MAX_NUMBER (not a bool, which JSON's true would be)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_NUMBER


@dataclass(frozen=True)
class Hello(_Versioned):
    """`terminal_fd`: the client's own descriptor number of the terminal it shows the
    pane on, offered for the service to write the pane's output to itself
    (docs/attach-protocol.md#the-terminal-handed-over); None: not offered.
    `read_only`: the client only watches (docs/attach-protocol.md#read-only-clients).
    `status`: its terminal's last row is for a status line (STATUS), not the pane.
    `glance`: a read-only client that is no one's terminal (a thumbnail: the web
    view's overview), so no use of the pane and no one looking at it."""

    kind = FrameType.HELLO
    terminal_fd: int | None = None
    read_only: bool = False
    status: bool = False
    glance: bool = False

    def payload(self) -> bytes:
        body: dict[str, object] = {"version": self.version}
        if self.terminal_fd is not None:
            body["terminal_fd"] = self.terminal_fd
        if self.read_only:
            body["read_only"] = True
        if self.status:
            body["status"] = True
        if self.glance:
            body["glance"] = True
        return json.dumps(body).encode()

    @classmethod
    def parse(cls, payload: bytes) -> "Hello":
        value = cls._object(payload)
        terminal_fd = value.get("terminal_fd")
        if terminal_fd is not None and not _whole_number(terminal_fd):
            raise ProtocolError(
                f"HELLO: terminal_fd must be a descriptor number (0 to {MAX_NUMBER})"
            )
        read_only, status, glance = (value.get(k, False) for k in ("read_only", "status", "glance"))
        if not (
            isinstance(read_only, bool) and isinstance(status, bool) and isinstance(glance, bool)
        ):
            raise ProtocolError("HELLO: read_only, status and glance must be true or false")
        return cls(cls._version(value), terminal_fd, read_only, status, glance)


@dataclass(frozen=True)
class Welcome(_Versioned):
    """`terminal`: the service writes the pane's output to the terminal the client
    offered, instead of sending OUTPUT and REPAINT frames. `paste`: it takes PASTE
    (a muxd from before PASTE says nothing of it: the client then types the text).
    `status`: it keeps the status line the client asked for (and takes STATUS)."""

    kind = FrameType.WELCOME
    terminal: bool = False
    paste: bool = False
    status: bool = False

    def payload(self) -> bytes:
        body = {"version": self.version, "terminal": self.terminal, "paste": self.paste}
        return json.dumps(body | {"status": True} if self.status else body).encode()

    @classmethod
    def parse(cls, payload: bytes) -> "Welcome":
        value = cls._object(payload)
        terminal, paste, status = (value.get(key, False) for key in ("terminal", "paste", "status"))
        if not (
            isinstance(terminal, bool) and isinstance(paste, bool) and isinstance(status, bool)
        ):
            raise ProtocolError("WELCOME: terminal, paste and status must be true or false")
        return cls(cls._version(value), terminal, paste, status)


@dataclass(frozen=True)
class _Packed(Frame):
    """Frames whose payload is their fields packed with FORMAT, nothing more."""

    FORMAT: ClassVar[struct.Struct]
    SHAPE: ClassVar[str]  # what the payload holds, for the error message

    @classmethod
    def check_length(cls, length: int) -> None:
        if length != cls.FORMAT.size:
            raise ProtocolError(f"{cls.kind.name} carries {cls.SHAPE}")

    def payload(self) -> bytes:
        return self.FORMAT.pack(*astuple(self))

    @classmethod
    def parse(cls, payload: bytes) -> "_Packed":
        if len(payload) != cls.FORMAT.size:
            raise ProtocolError(f"{cls.kind.name} carries {cls.SHAPE}")
        return cls(*cls.FORMAT.unpack(payload))


@dataclass(frozen=True)
class Attach(_Packed):
    kind = FrameType.ATTACH
    FORMAT = struct.Struct(">Q")
    SHAPE = "an 8-byte pane id"
    pane: int


@dataclass(frozen=True)
class Resize(_Packed):
    kind = FrameType.RESIZE
    FORMAT = struct.Struct(">HH")
    SHAPE = "rows and columns (2 bytes each)"
    rows: int
    cols: int


@dataclass(frozen=True)
class Attached(_Packed):
    kind = FrameType.ATTACHED
    FORMAT = struct.Struct(">QHH")
    SHAPE = "a pane id, rows and columns"
    pane: int
    rows: int
    cols: int


@dataclass(frozen=True)
class _Bytes(Frame):
    data: bytes
    MAX_LENGTH: ClassVar[int] = MAX_PAYLOAD

    @classmethod
    def check_length(cls, length: int) -> None:
        if length > cls.MAX_LENGTH:
            raise ProtocolError(f"a frame of {length} bytes is larger than {cls.MAX_LENGTH}")

    def payload(self) -> bytes:
        return self.data

    @classmethod
    def parse(cls, payload: bytes) -> "_Bytes":
        return cls(payload)


@dataclass(frozen=True)
class Input(_Bytes):
    kind = FrameType.INPUT


@dataclass(frozen=True)
class Paste(_Bytes):
    """Text pasted from the client's paste buffer: mux gives it to the program as a
    paste, bracketed when the program asked for that (docs/attach-protocol.md#paste)."""

    kind = FrameType.PASTE


@dataclass(frozen=True)
class Status(_Bytes):
    """The text (UTF-8) of the client's status line, which the service draws on the
    terminal's last row (docs/attach-protocol.md#the-status-line)."""

    kind = FrameType.STATUS
    MAX_LENGTH = MAX_STATUS


@dataclass(frozen=True)
class Output(_Bytes):
    kind = FrameType.OUTPUT


@dataclass(frozen=True)
class Repaint(_Bytes):
    kind = FrameType.REPAINT


@dataclass(frozen=True)
class Exited(_Packed):
    kind = FrameType.EXITED
    FORMAT = struct.Struct(">i")
    SHAPE = "a 4-byte status"
    status: int


@dataclass(frozen=True)
class Error(_Json):
    kind = FrameType.ERROR
    code: str
    message: str

    def payload(self) -> bytes:
        return json.dumps({"code": self.code, "message": self.message}).encode()

    @classmethod
    def parse(cls, payload: bytes) -> "Error":
        value = cls._object(payload)
        code, message = value.get("code"), value.get("message", "")
        if not is_text(code) or not is_text(message):
            raise ProtocolError("ERROR carries a code and a message, both strings")
        return cls(code, message)


@dataclass(frozen=True)
class Detach(Frame):
    kind = FrameType.DETACH


@dataclass(frozen=True)
class Detached(Frame):
    kind = FrameType.DETACHED


FRAME_TYPES: dict[FrameType, type[Frame]] = {
    cls.kind: cls
    for cls in (
        Hello,
        Welcome,
        Attach,
        Input,
        Paste,
        Status,
        Resize,
        Detach,
        Attached,
        Output,
        Repaint,
        Exited,
        Error,
        Detached,
    )
}


def encode(frame: Frame) -> bytes:
    payload = frame.payload()
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"a {frame.kind.name} payload of {len(payload)} bytes is too large")
    return HEADER.pack(frame.kind, len(payload)) + payload


class FrameDecoder:
    """Bytes in, frames out. Memory is bounded by one header plus one payload."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def receive_data(self, data: bytes) -> None:
        self._buffer += data

    def next_kind(self) -> FrameType | None:
        """The type of the next frame as soon as its header is in (None until then);
        ProtocolError if the header cannot start a frame. A conversation looks here to
        refuse a frame before its payload is waited for."""
        header = self._header()
        return None if header is None else header[0]

    def _header(self) -> tuple[FrameType, int] | None:
        """The next frame's type and its declared length, checked against that type."""
        if len(self._buffer) < HEADER.size:
            return None
        kind_byte, length = HEADER.unpack_from(self._buffer)
        try:
            kind = FrameType(kind_byte)
        except ValueError:
            raise ProtocolError(f"unknown frame type 0x{kind_byte:02x}") from None
        FRAME_TYPES[kind].check_length(length)
        return kind, length

    def next_frame(self) -> Frame | None:
        """The next complete frame, None until one is complete; ProtocolError if the
        bytes cannot be frames."""
        header = self._header()
        if header is None:
            return None
        kind, length = header
        if len(self._buffer) < HEADER.size + length:
            return None
        payload = bytes(self._buffer[HEADER.size : HEADER.size + length])
        del self._buffer[: HEADER.size + length]
        return FRAME_TYPES[kind].parse(payload)
