"""The window view's commands and the keys that type them after the prefix key, as
tmux's (docs/windows.md#the-window-view). Declared once, below the configuration,
because both sides read them: `muxctl attach` binds the keys, and mux.config checks
`[keys]` in config.toml, so that a wrong binding is reported where the others are."""

from collections.abc import Mapping

# Each key (one character after the prefix) and the command it types, by default.
DEFAULT_KEYS: Mapping[str, str] = {
    "%": "split-horizontal",
    '"': "split-vertical",
    "x": "close",
    "&": "close-window",
    "z": "zoom",
    "d": "detach",
    "c": "new-window",
    "n": "next-window",
    "p": "previous-window",
    "l": "last-window",
    ",": "rename-window",
    "w": "choose-tree",
    "[": "copy-mode",
    "]": "paste",
    "o": "next-pane",
    ";": "last-pane",
    "?": "list-keys",
    ":": "command-prompt",
    "q": "display-panes",
    "{": "swap-pane-up",
    "}": "swap-pane-down",
    " ": "next-layout",
    **{str(index): f"window-{index}" for index in range(10)},
}
# What each command does, one line, as `?` lists the keys bound (window-N: its own).
COMMAND_MEANINGS: Mapping[str, str] = {
    "split-horizontal": "split the focused pane side by side",
    "split-vertical": "split the focused pane, one above the other",
    "close": "close the focused pane (asks y/n)",
    "close-window": "close the window, every pane of it (asks y/n)",
    "zoom": "zoom the focused pane, and back",
    "detach": "detach",
    "new-window": "a new window: a shell in the focused pane's directory",
    "next-window": "show the next window",
    "previous-window": "show the previous window",
    "last-window": "show the window shown last",
    "rename-window": "rename the window",
    "choose-tree": "choose a window and pane from a list of them all",
    "copy-mode": "copy mode: the pane's history, search, copy",
    "paste": "paste what copy mode copied last",
    "next-pane": "the focus to the next pane of the window",
    "last-pane": "the focus back to the pane focused before",
    "list-keys": "this list of the keys",
    "command-prompt": "a command typed on the bottom row (split-window -h, ...)",
    "display-panes": "each pane's index shown; a digit focuses that pane",
    "swap-pane-up": "swap the focused pane with the one before it",
    "swap-pane-down": "swap the focused pane with the one after it",
    "next-layout": "the panes in tmux's next preset layout (even, main, tiled)",
}


def meaning(command: str) -> str:
    """What `command` does, in a few words."""
    if command.startswith("window-"):
        return f"show the window of index {command.removeprefix('window-')}"
    return COMMAND_MEANINGS.get(command, command)


# PageUp after the prefix (no character: not bindable in `[keys]`).
WINDOW_COMMANDS = frozenset(DEFAULT_KEYS.values()) | {"copy-mode-page-up"}
UNBOUND = "none"  # `[keys]` may give a key this to take its binding away


def binding_problem(key: str, command: str) -> str | None:
    """What is wrong with `key = command` in `[keys]`; None when nothing is."""
    if len(key) != 1 or not key.isascii() or not key.isprintable():
        return f"a key is one printable ASCII character, not {key!r}"
    if command != UNBOUND and command not in WINDOW_COMMANDS:
        known = ", ".join(sorted(WINDOW_COMMANDS))
        return f"{command!r} is no window command (they are: {known}; or {UNBOUND})"
    return None


def control_byte(char: str) -> bytes | None:
    """Control and `char` (`@`, a letter, `[`, `\\`, `]`, `^`, `_`, `?`, space); None for
    a character that has no control code."""
    upper = char.upper()
    if upper == "?":
        return b"\x7f"
    if upper == " ":
        return b"\x00"
    if len(upper) == 1 and "@" <= upper <= "_":
        return bytes([ord(upper) ^ 0x40])
    return None


def key_of(text: str) -> bytes | None:
    """The byte of a prefix or detach key written `^B`, `C-b`, `ctrl-b`, `ctrl+b` (a
    control key) or as one ASCII character; None for `none` (no such key). ValueError,
    saying what is wrong, for anything else."""
    lowered = text.lower()
    if lowered == "none":
        return None
    for prefix in ("^", "c-", "ctrl-", "ctrl+"):
        if lowered.startswith(prefix) and len(text) == len(prefix) + 1:
            if text[-1] != " " and (control := control_byte(text[-1])) is not None:
                return control
            break
    else:
        if len(text) == 1 and text.isascii():
            return text.encode()
    raise ValueError(f"{text!r} is no key: give ^X (a control key), one character, or none")
