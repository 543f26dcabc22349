"""What the overview shows of each pane, read from muxd over D-Bus (blocking: the web
server asks from one worker thread, never from its event loop)."""

from typing import TYPE_CHECKING, Any

from muxctl.commands.ls import pane_state

if TYPE_CHECKING:
    from muxctl.client import MuxClient

MAX_ROWS_SHOWN = 60  # of each screen: a thumbnail, not the pane


def pane_entries(client: "MuxClient") -> list[dict[str, Any]]:
    """Every pane (ListPanes) as the overview names it, as plain JSON values."""
    (entries,) = client.call("ListPanes")
    panes = []
    for entry in entries:
        pane = {key: value.value for key, value in entry.items()}
        panes.append(
            {
                "id": pane["id"],
                "window": pane.get("window", 0),
                "title": pane.get("title", ""),
                "program": str((pane.get("argv") or [""])[0]).rsplit("/", 1)[-1],
                "cwd": pane.get("cwd", ""),
                "state": pane_state(pane),
                "rows": pane.get("rows", 0),
                "cols": pane.get("cols", 0),
            }
        )
    return panes


def screen_text(client: "MuxClient", pane: int) -> list[str] | None:
    """The pane's screen as text (GetScreen); None when it has gone meanwhile."""
    from muxctl.errors import RemoteError

    try:
        (lines,) = client.call("GetScreen", body=[pane])
    except RemoteError:
        return None
    return list(lines)[:MAX_ROWS_SHOWN]


def overview(client: "MuxClient") -> list[dict[str, Any]]:
    """Every pane with its screen's text (`/api/panes`)."""
    panes = []
    for pane in pane_entries(client):
        screen = screen_text(client, pane["id"])
        if screen is not None:
            panes.append(pane | {"screen": screen})
    return panes


def overview_lists(client: "MuxClient") -> tuple[list[dict[str, Any]], dict[int, list[str]]]:
    """Every pane, and the screen text of those not running (the overview's feed
    watches the running ones itself)."""
    panes = pane_entries(client)
    texts = {}
    for pane in panes:
        if pane["state"] != "running" and (text := screen_text(client, pane["id"])) is not None:
            texts[pane["id"]] = text
    return panes, texts
