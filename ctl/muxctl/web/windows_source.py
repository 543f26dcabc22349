"""Windows and hosts for the web view, over D-Bus (blocking: asked from the web server's
one D-Bus thread)."""

from typing import TYPE_CHECKING, Any

from mux.protocol.layout import LayoutError, parse_layout, to_data
from muxctl.output import unwrap

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def windows(client: "MuxClient") -> list[dict[str, Any]]:
    """Each window with its split tree (docs/windows.md#layouts), checked: the page
    draws what the contract allows, nothing else."""
    (entries,) = client.call("ListWindows")
    listed = []
    for entry in entries:
        window = unwrap(entry)
        try:
            layout = to_data(parse_layout(str(window.get("layout", ""))))
        except LayoutError:
            continue  # (not a tree this muxctl knows: left out rather than guessed at)
        listed.append(
            {
                "id": window["id"],
                "title": window.get("title", ""),
                "focused_pane": window.get("focused_pane", 0),
                "layout": layout,
            }
        )
    return listed


def hosts(client: "MuxClient") -> list[dict[str, Any]]:
    """Each federation link: name, destination, state, last error (ListHosts)."""
    (entries,) = client.call("ListHosts")
    return [
        {key: entry[key].value for key in ("name", "destination", "state", "last_error")}
        for entry in entries
    ]
