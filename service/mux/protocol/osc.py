"""A streaming scanner for the OSC sequences mux acts on; no I/O.

Fed every chunk a pane prints, in order, it reports:

* OSC 7 `file://host/path` (percent-decoded; only for a local host: empty,
  `localhost` or this machine's name) and OSC 9;9 `path`: the shell's
  working directory (`CwdReport`), unless the path is no UTF-8 or holds a
  control character (C0, DEL, C1): any program may send these, and a path is
  published on D-Bus and printed to people (SPEC §12);
* OSC 0 and OSC 2: a window title (`TitleChange`), without C0, DEL and C1;
* OSC 9 `text`, OSC 777 `notify;title;body` and OSC 99: notifications the
  program asks for (`AppNotification`, mux.protocol.notices);
* OSC 133 A/B/C/D: prompt and command markers (`ShellMarker`), with the
  `mux_token=` of the launch that emitted them, the command line of C
  (`cmdline_url=`, percent-encoded) and the exit status of D.

A sequence ends with BEL or ST (ESC \\) and may be split across any number of
chunks. The scanner keeps at most MAX_OSC_BYTES of one sequence: a longer one
is skipped to its end without being buffered. Malformed input never raises.
The common case (no OSC in a chunk) is one `bytes.find`.
"""

import functools
from dataclasses import dataclass
from enum import Enum, auto

from mux.protocol.notices import AppNotification, parse_notification
from mux.protocol.visible import has_terminal_controls, without_controls

MAX_OSC_BYTES = 8192
PARSED_CACHE_SIZE = 64

_OSC_START = b"\x1b]"
_MARKER_KINDS = {b"A": "A", b"B": "B", b"C": "C", b"D": "D"}
_BEL = 0x07
_ESC = 0x1B
_ST_FINAL = 0x5C  # the "\" of ESC \


@dataclass(frozen=True, slots=True)
class CwdReport:
    path: str


@dataclass(frozen=True, slots=True)
class TitleChange:
    title: str


@dataclass(frozen=True, slots=True)
class ShellMarker:
    kind: str  # "A" prompt start, "B" prompt end, "C" command start, "D" command end
    token: str | None = None
    command: str | None = None  # C
    status: int | None = None  # D


OscEvent = CwdReport | TitleChange | ShellMarker | AppNotification


class _State(Enum):
    GROUND = auto()
    ESCAPE = auto()  # an ESC ended the last chunk
    OSC = auto()  # inside a sequence, collecting it
    OSC_ESCAPE = auto()  # inside a sequence, an ESC ended the last chunk
    SKIP = auto()  # inside a sequence too long to keep
    SKIP_ESCAPE = auto()


@functools.cache
def _with_localhost(local_hosts: frozenset[str]) -> frozenset[str]:
    """One set for every pane's scanner (the service's host names rarely change)."""
    return local_hosts | {"", "localhost"}


class OscScanner:
    def __init__(self, local_hosts: frozenset[str]) -> None:
        """`local_hosts`: the host names OSC 7 may carry (lower case), "" and localhost included."""
        self._local_hosts = _with_localhost(local_hosts)
        self._state = _State.GROUND
        self._body = bytearray()
        # A shell repeats itself (the same prompt marker, title and directory at
        # every prompt): parsed events are kept by body, a few at a time.
        self._parsed: dict[bytes, OscEvent | None] = {}

    def feed(self, data: bytes) -> list[OscEvent]:
        events: list[OscEvent] = []
        i = 0
        end = len(data)
        while i < end:
            state = self._state
            if state is _State.GROUND:
                i = self._ground(data, i, events)
            elif state is _State.ESCAPE:
                if data[i] == 0x5D:  # "]": the ESC before it began an OSC
                    i += 1
                    self._begin()
                else:
                    self._state = _State.GROUND
            elif state in (_State.OSC_ESCAPE, _State.SKIP_ESCAPE):
                keep = state is _State.OSC_ESCAPE
                self._state = _State.GROUND
                if data[i] == _ST_FINAL:
                    i += 1
                    if keep:
                        self._finish(events)
                # Any other byte: the ESC began another sequence and this one is
                # abandoned, like a terminal does; rescan it from the ESC.
                elif data[i] == 0x5D:
                    i += 1
                    self._begin()
            else:
                i = self._collect(data, i, events)
        return events

    def _ground(self, data: bytes, i: int, events: list[OscEvent]) -> int:
        """Whole sequences within the chunk; returns where a sequence that goes on in
        the next chunk begins (or the end). Only `bytes.find` looks at the bytes, and
        each position is looked at once: the next BEL is remembered, not sought again."""
        find = data.find
        end = len(data)
        bel = -1  # the next BEL at or after where we look, once known
        while True:
            start = find(_OSC_START, i)
            if start < 0:
                if data[-1] == _ESC:
                    self._state = _State.ESCAPE
                return end
            body = start + 2
            esc = find(b"\x1b", body)
            if bel < body:
                bel = find(b"\x07", body)
                if bel < 0:
                    bel = end  # none in this chunk
            if 0 <= esc < bel:
                if esc + 1 == end:  # perhaps the ESC of an ST split across chunks
                    self._begin()
                    return body
                if data[esc + 1] != _ST_FINAL:
                    i = esc  # abandoned at an ESC that is not ST; rescan from it
                    continue
                stop, i = esc, esc + 2
            elif bel < end:
                stop, i = bel, bel + 1
            else:  # unterminated in this chunk
                self._begin()
                return body
            if stop - body <= MAX_OSC_BYTES:
                event = self._parse(data[body:stop])
                if event is not None:
                    events.append(event)

    def _begin(self) -> None:
        self._state = _State.OSC
        self._body.clear()

    def _collect(self, data: bytes, i: int, events: list[OscEvent]) -> int:
        """Inside a sequence: up to its terminator, or to the end of the chunk."""
        keep = self._state is _State.OSC
        bel = data.find(b"\x07", i)
        esc = data.find(b"\x1b", i)
        stop = min(p for p in (bel, esc, len(data)) if p >= 0)
        if keep:
            if len(self._body) + (stop - i) > MAX_OSC_BYTES:
                keep = False
                self._body.clear()
            else:
                self._body += data[i:stop]
        if stop == len(data):
            self._state = _State.OSC if keep else _State.SKIP
            return stop
        if data[stop] == _BEL:
            self._state = _State.GROUND
            if keep:
                self._finish(events)
            return stop + 1
        # ESC: ST if a "\" follows (maybe in the next chunk), else an abandoned sequence.
        if stop + 1 == len(data):
            self._state = _State.OSC_ESCAPE if keep else _State.SKIP_ESCAPE
            return stop + 1
        self._state = _State.GROUND
        if data[stop + 1] == _ST_FINAL:
            if keep:
                self._finish(events)
            return stop + 2
        return stop  # rescanned in GROUND: perhaps ESC ] again

    def _finish(self, events: list[OscEvent]) -> None:
        body = bytes(self._body)
        self._body.clear()
        event = self._parse(body)
        if event is not None:
            events.append(event)

    def _parse(self, body: bytes) -> OscEvent | None:
        try:
            return self._parsed[body]
        except KeyError:
            pass
        event = self._parse_new(body)
        if isinstance(event, ShellMarker) and event.kind == "C":
            return event  # a command line rarely comes twice: not worth a place
        if len(self._parsed) >= PARSED_CACHE_SIZE:
            self._parsed.clear()
        self._parsed[body] = event
        return event

    def _parse_new(self, body: bytes) -> OscEvent | None:
        command, _, rest = body.partition(b";")
        if command == b"133":
            return _shell_marker(rest)
        if command in (b"0", b"2"):
            return TitleChange(without_controls(rest.decode("utf-8", errors="replace")))
        if command == b"7":
            return self._file_url(rest)
        if command == b"9" and rest.startswith(b"9;"):
            return _absolute_path(rest[2:].strip(b'"'))
        return parse_notification(command, rest)

    def _file_url(self, url: bytes) -> CwdReport | None:
        try:
            text = url.decode("ascii")
        except UnicodeDecodeError:
            return None
        if not text.lower().startswith("file://"):
            return None
        host, slash, path = text[len("file://") :].partition("/")
        if not slash or host.lower() not in self._local_hosts:
            return None
        return _absolute_path(_percent_decode(("/" + path).encode()))


def _absolute_path(raw: bytes) -> CwdReport | None:
    """A path, unless it is relative, is no UTF-8 (D-Bus carries only UTF-8: it could not
    be shown) or holds a control character. The working directory then stays as it was: a
    real directory of such a name is still read from the process table when mux samples
    it, and printed escaped."""
    if not raw.startswith(b"/"):
        return None
    try:
        path = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if has_terminal_controls(path) else CwdReport(path)


def _shell_marker(rest: bytes) -> ShellMarker | None:
    fields = rest.split(b";")
    kind = _MARKER_KINDS.get(fields[0])
    if kind is None:
        return None
    token = command = None
    status: int | None = None
    for field in fields[1:]:
        key, sep, value = field.partition(b"=")
        if not sep:
            if kind == "D" and status is None:
                status = _int_or_none(field)
        elif key == b"mux_token":
            token = value.decode("ascii", errors="replace")
        elif key == b"cmdline_url" and kind == "C":
            command = _percent_decode(value).decode("utf-8", errors="replace")
    return ShellMarker(kind, token, command, status)


def _percent_decode(data: bytes) -> bytes:
    """%XX escapes to bytes; a "%" not followed by two hex digits stays as it is.
    (urllib's unquote is several times slower on the short strings met here.)"""
    if b"%" not in data:
        return data
    first, *rest = data.split(b"%")
    out = [first]
    for part in rest:
        code = part[:2]
        if len(code) == 2 and code.isalnum():
            try:
                out.append(bytes((int(code, 16),)))
                out.append(part[2:])
                continue
            except ValueError:
                pass
        out.append(b"%" + part)
    return b"".join(out)


def _int_or_none(text: bytes) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None
