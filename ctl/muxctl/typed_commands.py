"""A command typed after `:` (the window view's command prompt, as tmux's): the window
commands by their own names (`split-horizontal`, `next-pane`: docs/windows.md) and by
tmux's, with the arguments tmux's take for them (`split-window -h`, `select-window -t
2`, `resize-pane -L 10`, `rename-window build`). Pure: a line in, the command out.
"""

import shlex
from dataclasses import dataclass

from mux.window_keys import WINDOW_COMMANDS
from muxctl.layout_presets import PRESETS

MAX_RESIZE_CELLS = 1000


@dataclass(frozen=True)
class TypedCommand:
    """A window command and its answer: the window's name (rename-window), the cells to
    move a border (resize-*), "y" for a close (typed out: nothing more to confirm)."""

    name: str
    answer: str | None = None


class NotACommand(ValueError):
    """What is wrong with the line typed, in a few words."""


# tmux's names (and short forms) for the same commands, with no argument.
_TMUX_NAMES = {
    "new-window": "new-window",
    "neww": "new-window",
    "next-window": "next-window",
    "next": "next-window",
    "previous-window": "previous-window",
    "prev": "previous-window",
    "last-window": "last-window",
    "last": "last-window",
    "last-pane": "last-pane",
    "lastp": "last-pane",
    "copy-mode": "copy-mode",
    "paste-buffer": "paste",
    "pasteb": "paste",
    "detach-client": "detach",
    "detach": "detach",
    "list-keys": "list-keys",
    "lsk": "list-keys",
    "choose-tree": "choose-tree",
    "display-panes": "display-panes",
    "next-layout": "next-layout",
    "nextl": "next-layout",
    "displayp": "display-panes",
    "kill-pane": "close",
    "killp": "close",
    "kill-window": "close-window",
    "killw": "close-window",
}
_SIDES = {"-L": "left", "-R": "right", "-U": "up", "-D": "down"}
_CONFIRMED = frozenset({"close", "close-window"})  # typed out: not asked again


def typed_command(line: str) -> TypedCommand | None:
    """The command `line` names (None: an empty line); NotACommand when it names none."""
    try:
        words = shlex.split(line)
    except ValueError as e:
        raise NotACommand(str(e)) from None
    if not words:
        return None
    name, args = words[0], words[1:]
    if name in ("rename-window", "renamew"):
        if not args or args[0].startswith("-"):
            raise NotACommand("rename-window needs a name")
        return TypedCommand("rename-window", " ".join(args))
    if name in ("split-window", "splitw"):
        if any(arg not in ("-h", "-v") for arg in args):
            raise NotACommand("split-window takes -h or -v here")
        return TypedCommand("split-horizontal" if "-h" in args else "split-vertical")
    if name in ("select-window", "selectw"):
        return _window(args)
    if name in ("resize-pane", "resizep"):
        return _resize(args)
    if name in ("select-pane", "selectp"):
        return _select_pane(args)
    if name in ("select-layout", "selectl"):
        if len(args) != 1 or args[0] not in PRESETS:
            raise NotACommand(f"select-layout takes one of {', '.join(PRESETS)}")
        return TypedCommand("select-layout", args[0])
    if name in ("swap-pane", "swapp"):
        if args not in (["-U"], ["-D"]):
            raise NotACommand("swap-pane takes -U or -D here")
        return TypedCommand("swap-pane-up" if args == ["-U"] else "swap-pane-down")
    own = name if name in WINDOW_COMMANDS and name != "command-prompt" else None
    command = _TMUX_NAMES.get(name) or own
    if command is None:
        raise NotACommand(f"unknown command: {name}")
    if args:
        raise NotACommand(f"{name} takes no arguments here")
    return TypedCommand(command, "y" if command in _CONFIRMED else None)


def _window(args: list[str]) -> TypedCommand:
    """`select-window -t N` (an index, 0 to 9; `:N` as tmux writes it too)."""
    target = args[1].lstrip(":") if len(args) == 2 and args[0] == "-t" else ""
    if len(target) != 1 or not target.isdigit():
        raise NotACommand("select-window -t takes a window index, 0 to 9")
    return TypedCommand(f"window-{target}")


def _resize(args: list[str]) -> TypedCommand:
    """`resize-pane -L|-R|-U|-D [N]` (N cells, 1 by default, as tmux's), `-Z` zooms."""
    if args == ["-Z"]:
        return TypedCommand("zoom")
    if not args or args[0] not in _SIDES or len(args) > 2:
        raise NotACommand("resize-pane takes -L, -R, -U or -D and a count, or -Z")
    count = args[1] if len(args) == 2 else "1"
    if not count.isdigit() or not 0 < int(count) <= MAX_RESIZE_CELLS:
        raise NotACommand(f"resize-pane: {count!r} is no count of cells")
    return TypedCommand(f"resize-{_SIDES[args[0]]}", count)


def _select_pane(args: list[str]) -> TypedCommand:
    """`select-pane -L|-R|-U|-D` (the pane that way), `-l` (the last one)."""
    if args == ["-l"]:
        return TypedCommand("last-pane")
    if len(args) != 1 or args[0] not in _SIDES:
        raise NotACommand("select-pane takes -L, -R, -U, -D or -l")
    return TypedCommand(_SIDES[args[0]])
