"""Window commands `muxctl attach` sends muxd for keys typed behind the prefix key.

A split: the new pane starts in the directory of the pane it splits, as a shell user
expects of `Ctrl-b %` (tmux users bind `-c "#{pane_current_path}"` for it), and takes
the focus (muxd gives it)."""

from typing import TYPE_CHECKING

from muxctl.wire import Variant

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def split_beside(client: "MuxClient", pane: int, direction: str) -> int:
    """SplitPane of `pane` (`direction`: "horizontal" or "vertical"), half each; the new
    pane's id. The directory is the one muxd knows for `pane` (left out when it knows
    none: muxd's default, the home directory)."""
    options: dict[str, Variant] = {}
    (entries,) = client.call("ListPanes")
    for entry in entries:
        if entry["id"].value == pane and entry["cwd"].value:
            options["cwd"] = Variant("s", entry["cwd"].value)
    new, _instance, _path = client.call("SplitPane", body=[pane, direction, 0.5, options])
    return int(new)


def set_focus(client: "MuxClient", window: int, pane: int) -> None:
    client.call("SetWindow", body=[window, {"focused_pane": Variant("t", pane)}])
