"""Window commands `muxctl attach` sends muxd for keys typed behind the prefix key.

A new pane (a split, a new window) starts in the directory of the focused pane, as a
shell user expects of `Ctrl-b %` and `Ctrl-b c` (tmux users bind
`-c "#{pane_current_path}"` for it), and takes the focus (muxd gives it). Windows are
numbered from 0 in the order of their ids, as `muxctl windows` lists them.
"""

import os
import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mux.protocol.layout import (
    LayoutError,
    Node,
    move_border,
    panes_of,
    parse_layout,
    to_json,
    with_panes_renamed,
)
from muxctl.errors import CtlError
from muxctl.output import unwrap
from muxctl.prefix_keys import WINDOW_SWITCHES
from muxctl.status_line import status_text, window_parts
from muxctl.view_question import Asked
from muxctl.wire import Variant

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def split_beside(client: "MuxClient", pane: int, direction: str) -> int:
    """SplitPane of `pane` (`direction`: "horizontal" or "vertical"), half each; the new
    pane's id."""
    options = _in_directory_of(client, pane)
    new, _instance, _path = client.call("SplitPane", body=[pane, direction, 0.5, options])
    return int(new)


def new_window(client: "MuxClient", beside: int) -> int:
    """A new window running the user's shell (Spawn without a program) in the directory
    of pane `beside`; the new pane's id."""
    new, _instance, _path = client.call("Spawn", body=[_in_directory_of(client, beside)])
    return int(new)


def window_ids(client: "MuxClient") -> list[int]:
    """Every window's id, in order: a window's index is its place here."""
    (entries,) = client.call("ListWindows")
    return sorted(int(entry["id"].value) for entry in entries)


def focused_pane(client: "MuxClient", window: int) -> int | None:
    _, found = find_window(client, window, 0)
    return found[2] if found is not None else None


def set_focus(client: "MuxClient", window: int, pane: int) -> None:
    client.call("SetWindow", body=[window, {"focused_pane": Variant("t", pane)}])


def _in_directory_of(client: "MuxClient", pane: int) -> dict[str, Variant]:
    """Spawn options for the directory muxd knows for `pane` (none when it knows none:
    muxd's default, the home directory)."""
    (entries,) = client.call("ListPanes")
    for entry in entries:
        if entry["id"].value == pane and entry["cwd"].value:
            return {"cwd": Variant("s", entry["cwd"].value)}
    return {}


def pick_window(current: int, windows: list[int], command: str, last: int | None) -> int | None:
    """The window `command` goes to from `current` ("next-window", "previous-window",
    "last-window", "window-N"); None when there is none (no such index, no last one)."""
    if command == "last-window":
        return last if last in windows else None
    if command.startswith("window-"):
        index = int(command.removeprefix("window-"))
        return windows[index] if index < len(windows) else None
    if current not in windows:
        return windows[0] if windows else None
    step = 1 if command == "next-window" else -1
    return windows[(windows.index(current) + step) % len(windows)]


def carry_out(
    client: "MuxClient",
    command: str,
    window: int,
    focus: int,
    last_window: int | None,
    *,
    answer: str = "",
) -> tuple[int, int] | None:
    """Do a window command that is muxd's (a split, a close, a new window, a switch, a
    rename to `answer`) in `window`, whose focused pane is `focus`. Returns (window, pane)
    when another window is to be shown (0: the window of that pane; pane 0: its focused
    one); None when the window shown stays. CtlError or RemoteError when it cannot be
    done (the bell)."""
    if command == "rename-window":
        client.call("SetWindow", body=[window, {"title": Variant("s", answer)}])
    elif command.startswith("split-"):
        split_beside(client, focus, command.removeprefix("split-"))
    elif command == "close":
        client.call("Kill", body=[focus])
    elif command == "close-window":
        for pane in panes_of_window(client, window):
            client.call("Kill", body=[pane])
    elif command == "new-window":
        return 0, new_window(client, focus)
    elif command in WINDOW_SWITCHES:
        to = pick_window(window, window_ids(client), command, last_window)
        if to is None or to == window:
            raise CtlError("no such window")
        return to, 0
    return None


# The commands asked about first (muxctl.view_question): y/n for those that lose work,
# the name for a rename.
ASKS_FIRST = frozenset({"close", "close-window", "rename-window", "command-prompt"})


def asks_first(client: "MuxClient", command: str, window: int, focus: int) -> Asked | None:
    """The question asked before `command` (one of ASKS_FIRST); None when there is
    nothing to ask: closing panes whose programs have all ended loses nothing."""
    if command in ("close", "close-window"):
        closed = [focus] if command == "close" else panes_of_window(client, window)
        states = {int(p["id"]): p["state"] for p in plain_entries(client, "ListPanes")}
        if all(states.get(pane) == "exited" for pane in closed):
            return None
    if command == "close":
        return Asked(f"kill pane {focus}? (y/n)")
    if command == "command-prompt":
        return Asked(":", typed=True)
    if command == "rename-window":
        (entries,) = client.call("ListWindows")
        titles = [e["title"].value for e in entries if e["id"].value == window]
        return Asked("(rename-window) ", typed=True, initial=titles[0] if titles else "")
    count = len(panes_of_window(client, window))
    return Asked(f"kill window {window} and its {count} pane{'s' if count > 1 else ''}? (y/n)")


def panes_of_window(client: "MuxClient", window: int) -> list[int]:
    _, found = find_window(client, window, 0)
    return list(panes_of(found[1])) if found is not None else []


def plain_entries(client: "MuxClient", member: str) -> list[dict[str, Any]]:
    """What a Manager list method (`ListWindows`, `ListPanes`) answers, as plain values."""
    (entries,) = client.call(member)
    return [unwrap(entry) for entry in entries]


def find_window(
    client: "MuxClient", window: int, pane: int
) -> tuple[list[dict[str, Any]], tuple[int, Node, int] | None]:
    """Every window (ListWindows, plain values), and the one shown: `window`, or (0)
    the window of `pane`, as (id, layout, focused pane); None when it is gone."""
    windows = plain_entries(client, "ListWindows")
    for plain in windows:
        layout = layout_of(plain)
        if (window and plain["id"] == window) or (not window and pane in panes_of(layout)):
            return windows, (int(plain["id"]), layout, int(plain["focused_pane"]))
    return windows, None


def layout_of(window: Mapping[str, Any]) -> Node:
    """A ListWindows entry's layout; CtlError (the view ends saying so) when muxd sent
    one this muxctl cannot read, which muxd never writes."""
    try:
        return parse_layout(str(window["layout"]))
    except LayoutError as e:
        raise CtlError(f"mux sent window {window['id']} a layout muxctl cannot read: {e}") from None


def status_of(
    windows: list[dict[str, Any]],
    panes: list[dict[str, Any]],
    shown: tuple[int, int, bool],
    state: str,
) -> tuple[str, list[tuple[int, str]]]:
    """The status line of the view showing `shown`: (window, focused pane, zoomed); and
    each window's id and part of it (for a click on it). `windows`, `panes`: ListWindows
    and ListPanes, plain."""
    window, focus, zoomed = shown
    home = os.environ.get("HOME")
    host = socket.gethostname()
    text = status_text(
        windows, window, panes, focus, zoomed=zoomed, state=state, home=home, host=host
    )
    return text, window_parts(windows, window, panes, zoomed=zoomed)


RESIZE_CELLS = 5  # what Alt and an arrow move a border by, as tmux's M-arrow


def resize_pane(
    client: "MuxClient",
    window: int,
    layout: Node,
    pane: int,
    *,
    side: str,
    size: int,
    cells: int = RESIZE_CELLS,
) -> None:
    """Move `pane`'s border on `side` by `cells` (SetWindow with the new layout); `size`:
    the pane's columns (or rows) now. CtlError when it cannot move that way."""
    moved = move_border(layout, pane, side, cells, size)
    if moved is None:
        raise CtlError(f"pane {pane} has no border that can move {side} that far")
    set_layout(client, window, moved)


def swap_pane(client: "MuxClient", window: int, layout: Node, pane: int, down: bool) -> None:
    """`pane` and the one after it (`down`; else before it) in the window's order trade
    places, as tmux's swap-pane -D (-U), the last and the first too; the focus stays
    with `pane`. Nothing with one pane."""
    ids = list(panes_of(layout))
    if len(ids) > 1 and pane in ids:
        other = ids[(ids.index(pane) + (1 if down else -1)) % len(ids)]
        set_layout(client, window, with_panes_renamed(layout, {pane: other, other: pane}))


def set_layout(client: "MuxClient", window: int, layout: Node) -> None:
    client.call("SetWindow", body=[window, {"layout": Variant("s", to_json(layout))}])
