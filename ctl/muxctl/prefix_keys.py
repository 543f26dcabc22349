"""The window view's keys: typed keys for the focused pane, the detach key, and window
commands behind a prefix key, as tmux's (docs/windows.md#the-window-view).

Pure: bytes in, events out. After the prefix key, one key is a command: an arrow
moves the focus, `%` splits side by side, `"` one above the other, `x` closes the
focused pane, `z` zooms it (and back), `c` makes a new window, `n`/`p` show the next
and previous one, `l` the last one shown, `0`-`9` the one of that index, `o` and `;`
focus the next and the last pane, `?` lists the keys, `d` detaches; the prefix key
again types it; any other key is ignored, as tmux ignores a key it has no binding for.
What the terminal brackets as pasted (DECSET 2004) is a paste, never keys: a prefix or
detach key inside it is text, as in tmux.
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from mux.protocol.paste import BRACKET_CLOSE, BRACKET_OPEN
from mux.window_keys import DEFAULT_KEYS, meaning

ARROWS = {b"A": "up", b"B": "down", b"C": "right", b"D": "left"}
# A paste is given on in pieces of at most this much (each a PASTE frame of its own).
PASTE_PIECE_BYTES = 256 * 1024
COMMAND_KEYS = {key.encode(): command for key, command in DEFAULT_KEYS.items()}
# What two of the keys after the prefix that are no character do (said in both lists).
_FOCUS_THAT_WAY = "move the focus to the pane that way"
_BORDER_THAT_WAY = "move the focused pane's border that way by 5 cells"
# What each key after the prefix does, for `muxctl attach --help` (the man page's WINDOW
# KEYS and docs/windows.md#the-window-view say the same).
KEY_HELP = (
    ('% or "', "split the focused pane side by side, or one above the other"),
    ("arrows", _FOCUS_THAT_WAY),
    ("o ;", "move the focus to the next pane, or back to the one focused before"),
    ("q", "show each pane's index; a digit then focuses that pane"),
    ("Alt-arrows", _BORDER_THAT_WAY),
    ("{ }", "swap the focused pane with the one before it, or after it"),
    ("Space", "the panes in the next preset layout (even, main, tiled), as tmux's"),
    ("x", "close the focused pane (asks y/n)"),
    ("&", "close the window, every pane of it (asks y/n)"),
    ("z", "zoom the focused pane, and back"),
    ("c", "a new window: a shell in the focused pane's directory"),
    ("n p l", "the next, previous, and last shown window"),
    (",", "rename the window (typed on the bottom row; Enter sets it)"),
    ("w", "choose a window and pane from a list of them all"),
    ("0 ... 9", "the window of that index (as muxctl windows lists them)"),
    ("[ or PageUp", "copy mode: scroll back through the pane's history, search, copy"),
    ("]", "paste what copy mode copied last"),
    (":", "a command, by tmux's names (split-window -h, resize-pane -L 5, ...)"),
    ("?", "list the keys"),
    ("d", "detach"),
    ("the prefix", "types it"),
)
# The keys after the prefix that are no character (not bindable in `[keys]`), for `?`.
FIXED_KEYS = (
    ("arrows", _FOCUS_THAT_WAY),
    ("M-arrows", _BORDER_THAT_WAY),
    ("PageUp", "copy mode, a page up"),
)


def keys_help() -> str:
    """The window keys as `--help` shows them (the same whatever the environment says:
    the man page is made from it)."""
    lines = ["window keys, after the prefix key (^b unless --prefix-key or prefix says otherwise):"]
    lines += [f"  {key:<11} {meaning}" for key, meaning in KEY_HELP]
    lines.append("The detach key (^\\ unless --detach-key says otherwise) detaches at once.")
    lines.append(
        "The mouse (unless mouse = false): a click focuses a pane, or shows a window of the"
        " status line; a border dragged resizes; the wheel scrolls back (copy mode)."
    )
    return "\n".join(lines)


def key_list(prefix: bytes | None, bindings: Mapping[bytes, str]) -> list[str]:
    """The keys as `?` lists them, a line each (`C-b %   split-horizontal   split the
    focused pane side by side`): those bound now, `[keys]` applied, then the fixed ones."""
    before = key_label(prefix) if prefix is not None else "(no prefix)"
    bound = [
        ("Space" if key == b" " else key.decode(), f"{command:<16} {meaning(command)}")
        for key, command in sorted(bindings.items())
    ]
    return [f"{before} {key:<8} {what}" for key, what in [*bound, *FIXED_KEYS]]


def key_label(key: bytes) -> str:
    """A key's name as tmux writes it: `C-b` for a control key, else the character."""
    if len(key) == 1 and (key[0] < 0x20 or key[0] == 0x7F):
        return "C-?" if key[0] == 0x7F else "C-" + chr(key[0] ^ 0x40).lower()
    return key.decode(errors="replace")


# The commands that change which window is shown (muxctl.window_commands.pick_window).
WINDOW_SWITCHES = frozenset({"next-window", "previous-window", "last-window"}) | {
    f"window-{index}" for index in range(10)
}


@dataclass(frozen=True)
class Typed:
    data: bytes


@dataclass(frozen=True)
class Command:
    name: str  # "up", "down", "left", "right", or one of COMMAND_KEYS' values


@dataclass(frozen=True)
class DetachNow:
    """The detach key: detach at once."""


@dataclass(frozen=True)
class Pasted:
    """Text the terminal bracketed as pasted (the brackets taken off), or a piece of it."""

    data: bytes


KeyEvent = Typed | Command | DetachNow | Pasted


class PrefixKeys:
    def __init__(
        self,
        prefix: bytes | None,
        detach: bytes | None,
        bindings: Mapping[bytes, str] = COMMAND_KEYS,
    ) -> None:
        """`bindings`: each key after the prefix and its command (`[keys]`)."""
        self._prefix = prefix
        self._detach = detach
        self._bindings = bindings
        self._after_prefix: bytes | None = None  # the bytes of a command not yet whole
        self._pasting: bytes | None = None  # inside a paste: what of it is not given on yet
        self._ahead = b""  # read after a command that hands the terminal on (`feed`'s `until`)

    def listed(self) -> list[str]:
        """The keys bound, as `?` lists them; the prefix typed twice, the detach key."""
        lines = key_list(self._prefix, self._bindings)
        if self._prefix is not None:
            again = key_label(self._prefix)
            lines.append(f"{again} {again:<8} type {again}")
        if self._detach is not None:
            lines.append(f"{key_label(self._detach):<12} detach at once (no prefix before it)")
        return lines

    def feed(self, data: bytes, *, until: Collection[str] = ()) -> list[KeyEvent]:
        """The events of the keys in `data`. `until`: commands that hand the terminal on
        to another part of muxctl (a lone pane's `:`, `x`, `[`...): what follows one in
        the same read is not taken as keys here but kept (`take_ahead`) for that part,
        which reads the terminal next."""
        events: list[KeyEvent] = []
        while data:
            if events and isinstance(last := events[-1], Command) and last.name in until:
                self._ahead += data
                break
            if self._pasting is not None:
                data = self._paste(self._pasting + data, events)
                continue
            if self._after_prefix is not None:
                data = self._command(self._after_prefix + data, events)
                continue
            cut, key = self._first_special(data)
            if cut > 0:
                events.append(Typed(data[:cut]))
            if key is None:
                break
            data = data[cut + len(key) :]
            if key == self._detach:
                events.append(DetachNow())
                break
            if key == BRACKET_OPEN:
                self._pasting = b""
            else:
                self._after_prefix = b""
        return events

    def give_back(self, keys: bytes) -> None:
        """Keys read from the terminal and not used (what follows a question's answer):
        the next part's, as if typed after a command `feed` stopped at."""
        self._ahead += keys

    def take_ahead(self) -> bytes:
        """What was typed after a command `feed` stopped at (b"": nothing); kept no more."""
        ahead, self._ahead = self._ahead, b""
        return ahead

    def _paste(self, data: bytes, events: list[KeyEvent]) -> bytes:
        """Inside a paste: what is pasted up to its end, given on; what follows it."""
        end = data.find(BRACKET_CLOSE)
        if end >= 0:
            self._pasting = None
            if end:
                events.append(Pasted(data[:end]))
            return data[end + len(BRACKET_CLOSE) :]
        # (An end cut at the end of the read: a few bytes kept for the next one.)
        cut = (n for n in range(len(BRACKET_CLOSE) - 1, 0, -1) if data.endswith(BRACKET_CLOSE[:n]))
        whole = len(data) - next(cut, 0)
        while whole >= PASTE_PIECE_BYTES:  # a piece given on, between two characters
            piece = _whole_characters(data[:PASTE_PIECE_BYTES])
            events.append(Pasted(piece))
            data, whole = data[len(piece) :], whole - len(piece)
        self._pasting = data
        return b""

    def _first_special(self, data: bytes) -> tuple[int, bytes | None]:
        """Where the first detach or prefix key is, and which (len(data), None: none)."""
        found: tuple[int, bytes | None] = (len(data), None)
        for key in (self._detach, self._prefix, BRACKET_OPEN):
            if key is not None and 0 <= (at := data.find(key)) < found[0]:
                found = (at, key)
        return found

    def _command(self, pending: bytes, events: list[KeyEvent]) -> bytes:
        """The key after the prefix; returns what follows it (b"" while incomplete)."""
        if self._detach is not None and pending.startswith(self._detach):
            self._after_prefix = None
            events.append(DetachNow())  # at once, as always
            return b""
        if pending.startswith(b"\x1b"):
            end = sequence_end(pending)
            if end is None:  # the rest of the key is in the next read
                self._after_prefix = pending
                return b""
            self._after_prefix = None
            if pending[1:2] in (b"[", b"O") and end == 3 and pending[2:3] in ARROWS:
                events.append(Command(ARROWS[pending[2:3]]))
            elif pending[:end] == b"\x1b[5~":  # PageUp
                events.append(Command("copy-mode-page-up"))
            elif pending[:5] == b"\x1b[1;3" and end == 6 and pending[5:6] in ARROWS:
                events.append(Command("resize-" + ARROWS[pending[5:6]]))  # Alt and an arrow
            return pending[end:]  # (another key's sequence has no binding: ignored)
        self._after_prefix = None
        if self._prefix is not None and pending.startswith(self._prefix):
            events.append(Typed(self._prefix))
            return pending[len(self._prefix) :]
        name = self._bindings.get(pending[:1])
        if name is not None:
            events.append(Command(name))
        return pending[1:]


def _whole_characters(data: bytes) -> bytes:
    """`data` without a UTF-8 character cut at its end (at most 3 bytes fewer)."""
    for back in range(1, min(4, len(data)) + 1):
        lead = data[-back]
        if lead & 0xC0 != 0x80:  # (ASCII, or the first byte of a character)
            needs = 1 if lead < 0x80 else 2 if lead >> 5 == 6 else 3 if lead >> 4 == 14 else 4
            return data if needs <= back else data[:-back]
    return data


def sequence_end(data: bytes) -> int | None:
    """Where the key's escape sequence at the start of `data` ends (None: not yet):
    ESC then `[` and a CSI sequence (parameters, then a final byte), ESC `O` and one
    byte; any other byte after ESC is a key of its own."""
    if len(data) < 2:
        return None
    if data[1:2] == b"O":
        return 3 if len(data) >= 3 else None
    if data[1:2] != b"[":
        return 1  # a lone escape (or Alt and a key): only the escape is taken
    for at in range(2, len(data)):
        if 0x40 <= data[at] <= 0x7E:
            return at + 1
    return None
