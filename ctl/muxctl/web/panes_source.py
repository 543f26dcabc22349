"""What the overview shows of each pane, read from muxd over D-Bus (blocking: the web
server asks from one worker thread, never from its event loop)."""

from typing import TYPE_CHECKING, Any

from muxctl.commands.ls import pane_state

if TYPE_CHECKING:
    from muxctl.client import MuxClient

MAX_ROWS_SHOWN = 60  # of each screen: a thumbnail, not the pane


def overview(client: "MuxClient") -> list[dict[str, Any]]:
    """Every pane (ListPanes) with its screen's text (GetScreen), as plain JSON values."""
    from muxctl.errors import RemoteError

    (entries,) = client.call("ListPanes")
    panes = []
    for entry in entries:
        pane = {key: value.value for key, value in entry.items()}
        try:
            (lines,) = client.call("GetScreen", body=[pane["id"]])
        except RemoteError:  # (closed meanwhile)
            continue
        panes.append(
            {
                "id": pane["id"],
                "window": pane.get("window", 0),
                "title": pane.get("title", ""),
                "program": str((pane.get("argv") or [""])[0]).rsplit("/", 1)[-1],
                "cwd": pane.get("cwd", ""),
                "state": pane_state(pane),
                "screen": list(lines)[:MAX_ROWS_SHOWN],
            }
        )
    return panes
