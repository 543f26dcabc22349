"""What a pane's program asks to tell its user, and how it becomes a notification's
text; no I/O (docs/desktop.md#notifications).

Programs ask through OSC 9 (`9;TEXT`, iTerm2's), OSC 777 (`777;notify;TITLE;BODY`,
urxvt's and VTE's) and OSC 99 (kitty's: `99;METADATA;PAYLOAD`, the payload a title
or a body by `p=`, base64 when `e=1`); an integrated shell's OSC 133 D after C
says a command finished. Text from a program is bounded, and its control
characters are shown as escapes (`\\x1b`, `\\u202e`: mux.protocol.visible) before
anyone sees it (SPEC §12).
"""

import base64
import binascii
import re
from dataclasses import dataclass

from mux.protocol.visible import visible

SUMMARY_CHARS = 120
BODY_CHARS = 500
_LINE_SPACE = re.compile("[ \t\r\n]+")
# An escape `visible` wrote, cut short at the end of a bounded text.
_PARTIAL_ESCAPE = re.compile(r"\\(?:x[0-9a-f]?|u[0-9a-f]{0,3})?$")


@dataclass(frozen=True, slots=True)
class AppNotification:
    """OSC 9, 777 or 99: the program's own words."""

    title: str
    body: str


@dataclass(frozen=True, slots=True)
class CommandFinished:
    """An integrated shell's command ended (OSC 133 D after C)."""

    command: str
    status: int | None
    seconds: float


Notice = AppNotification | CommandFinished


def newsworthy(notice: Notice, command_seconds: float) -> bool:
    """Whether a notice is worth telling: a program's always, a command's that ran at
    least `command_seconds` (notify_command_seconds)."""
    return not isinstance(notice, CommandFinished) or notice.seconds >= command_seconds


def finished_summary(notice: CommandFinished) -> str:
    """`COMMAND: finished`, `: failed (status N)` or `: ended` (no status)."""
    command = notice.command or "a command"
    if notice.status == 0:
        outcome = "finished"
    elif notice.status is None:
        outcome = "ended"
    else:
        outcome = f"failed (status {notice.status})"
    return f"{command}: {outcome}"


def notice_summary(notice: Notice) -> str:
    """A notice in a few words: what a pane asked to tell (its Notice property)."""
    if isinstance(notice, CommandFinished):
        return shown(finished_summary(notice), SUMMARY_CHARS)
    return shown(notice.title or notice.body, SUMMARY_CHARS)


def shown(text: str, limit: int) -> str:
    """On one line (runs of spaces, tabs and line breaks become one space), every
    other control character written as an escape, at most `limit` characters."""
    return bounded(visible(_LINE_SPACE.sub(" ", text).strip(" ")), limit)


def bounded(text: str, limit: int) -> str:
    """At most `limit` characters, an ellipsis saying it was cut; an escape is never
    left half-written at the cut."""
    if len(text) <= limit:
        return text
    return _PARTIAL_ESCAPE.sub("", text[: limit - 1]) + "…"


def parse_notification(command: bytes, rest: bytes) -> AppNotification | None:
    """The notification an OSC sequence `command;rest` carries, if it is one."""
    if command == b"9":
        # 9;9 is a directory and 9;4 progress (ConEmu's): a notification is text.
        if re.match(rb"\d+;", rest) or not rest:
            return None
        return AppNotification("", _text(rest))
    if command == b"777":
        kind, _, fields = rest.partition(b";")
        if kind != b"notify":
            return None
        title, _, body = fields.partition(b";")
        return AppNotification(_text(title), _text(body))
    if command == b"99":
        return _kitty(rest)
    return None


def _kitty(rest: bytes) -> AppNotification | None:
    metadata, sep, payload = rest.partition(b";")
    if not sep:
        return None
    keys = dict(item.partition(b"=")[::2] for item in metadata.split(b":") if item)
    if keys.get(b"d") == b"0":
        return None  # more chunks follow; mux shows single-chunk notifications
    if keys.get(b"e") == b"1":
        try:
            payload = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            return None
    text = _text(payload)
    part = keys.get(b"p", b"title")
    if part == b"title":
        return AppNotification(text, "")
    if part == b"body":
        return AppNotification("", text)
    return None


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")
