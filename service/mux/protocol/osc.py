"""A streaming scanner for the OSC sequences mux acts on; no I/O.

Fed every chunk a pane prints, in order, it reports:

* OSC 7 `file://host/path` (percent-decoded; only for a local host: empty,
  `localhost` or this machine's name) and OSC 9;9 `path`: the shell's
  working directory (`CwdReport`);
* OSC 0 and OSC 2: a window title (`TitleChange`);
* OSC 133 A/B/C/D: prompt and command markers (`ShellMarker`), with the
  `mux_token=` of the launch that emitted them, the command line of C
  (`cmdline_url=`, percent-encoded) and the exit status of D.

A sequence ends with BEL or ST (ESC \\) and may be split across any number of
chunks. The scanner keeps at most MAX_OSC_BYTES of one sequence: a longer one
is skipped to its end without being buffered. Malformed input never raises.
The common case (no OSC in a chunk) is one `bytes.find`.
"""

import os
import re
import urllib.parse
from dataclasses import dataclass
from enum import Enum, auto

MAX_OSC_BYTES = 8192

_OSC_START = b"\x1b]"
_MARKER_KINDS = {b"A": "A", b"B": "B", b"C": "C", b"D": "D"}
_CONTROL = re.compile("[\x00-\x1f\x7f]")
# One sequence: its body (no BEL, no ESC) and its terminator, if it has one here.
_SEQUENCE = re.compile(rb"\x1b\]([^\x07\x1b]*)(\x07|\x1b\\)?")
_BEL = 0x07
_ESC = 0x1B
_ST_FINAL = 0x5C  # the "\" of ESC \


@dataclass(slots=True)
class CwdReport:
    path: str


@dataclass(slots=True)
class TitleChange:
    title: str


@dataclass(slots=True)
class ShellMarker:
    kind: str  # "A" prompt start, "B" prompt end, "C" command start, "D" command end
    token: str | None = None
    command: str | None = None  # C
    status: int | None = None  # D


OscEvent = CwdReport | TitleChange | ShellMarker


class _State(Enum):
    GROUND = auto()
    ESCAPE = auto()  # an ESC ended the last chunk
    OSC = auto()  # inside a sequence, collecting it
    OSC_ESCAPE = auto()  # inside a sequence, an ESC ended the last chunk
    SKIP = auto()  # inside a sequence too long to keep
    SKIP_ESCAPE = auto()


class OscScanner:
    def __init__(self, local_hosts: frozenset[str]) -> None:
        """`local_hosts`: the host names OSC 7 may carry (lower case), "" and localhost included."""
        self._local_hosts = local_hosts | {"", "localhost"}
        self._state = _State.GROUND
        self._body = bytearray()

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
        """Whole sequences within the chunk, found by the regex engine; returns where a
        sequence that goes on in the next chunk begins (or the end)."""
        if data.find(_OSC_START, i) < 0:  # the common case: one find
            if data[-1] == _ESC:
                self._state = _State.ESCAPE
            return len(data)
        for match in _SEQUENCE.finditer(data, i):
            body, terminator = match.group(1, 2)
            if terminator is not None:
                if len(body) <= MAX_OSC_BYTES:
                    event = self._parse(body)
                    if event is not None:
                        events.append(event)
            elif match.end() >= len(data) - 1:  # goes on in the next chunk
                # (up to its end, or to a last ESC that may begin its ST)
                self._begin()
                return match.start() + 2
            # else: abandoned at an ESC that is not ST; the ESC is scanned again
        if data[-1] == _ESC:
            self._state = _State.ESCAPE
        return len(data)

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
        command, _, rest = body.partition(b";")
        if command == b"133":
            return _shell_marker(rest)
        if command in (b"0", b"2"):
            text = rest.decode("utf-8", errors="replace")
            if _CONTROL.search(text):
                text = _CONTROL.sub("", text)
            return TitleChange(text)
        if command == b"7":
            return self._file_url(rest)
        if command == b"9" and rest.startswith(b"9;"):
            return _absolute_path(rest[2:].strip(b'"'))
        return None

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
        raw = ("/" + path).encode()
        return _absolute_path(urllib.parse.unquote_to_bytes(raw) if b"%" in raw else raw)


def _absolute_path(raw: bytes) -> CwdReport | None:
    if not raw.startswith(b"/") or b"\0" in raw:
        return None
    return CwdReport(os.fsdecode(raw))


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
            command = urllib.parse.unquote(value.decode("ascii", errors="replace"))
    return ShellMarker(kind, token, command, status)


def _int_or_none(text: bytes) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None
