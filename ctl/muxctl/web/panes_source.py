"""What the overview shows of each pane, read from muxd over D-Bus (blocking: the web
server asks from one worker thread, never from its event loop)."""

import contextlib
from typing import TYPE_CHECKING, Any

from mux.protocol.names import host_path
from muxctl.commands.ls import pane_state
from muxctl.output import unwrap

if TYPE_CHECKING:
    from muxctl.client import MuxClient

MAX_ROWS_SHOWN = 60  # of each screen: a thumbnail, not the pane


def pane_entries(client: "MuxClient", host: str = "") -> list[dict[str, Any]]:
    """Every pane (ListPanes) of this mux, or of one of its hosts, as the overview names
    it, as plain JSON values; `key` tells panes of different hosts apart."""
    (entries,) = client.call("ListPanes", path=_path(host))
    panes = []
    for entry in entries:
        pane = unwrap(entry)
        panes.append(
            {
                "key": f"{host}:{pane['id']}" if host else str(pane["id"]),
                "host": host,
                "id": pane["id"],
                "window": pane.get("window", 0),
                "title": pane.get("title", ""),
                "program": str((pane.get("argv") or [""])[0]).rsplit("/", 1)[-1],
                "cwd": pane.get("cwd", ""),
                "state": pane_state(pane),
                "rows": pane.get("rows", 0),
                "cols": pane.get("cols", 0),
                "notice": pane.get("notice", ""),  # (asked to tell, unseen: a muxd of now)
            }
        )
    return panes


def screen_text(client: "MuxClient", pane: int, host: str = "") -> list[str] | None:
    """The pane's screen as text (GetScreen); None when it has gone meanwhile."""
    from muxctl.errors import RemoteError

    try:
        (lines,) = client.call("GetScreen", body=[pane], path=_path(host))
    except RemoteError:
        return None
    return list(lines)[:MAX_ROWS_SHOWN]


def _path(host: str) -> str | None:
    """Where a call about `host`'s panes goes: its host object; this mux's: the root."""
    return host_path(host) if host else None


def overview(client: "MuxClient") -> list[dict[str, Any]]:
    """Every pane with its screen's text (`/api/panes`)."""
    panes = []
    for pane in pane_entries(client):
        screen = screen_text(client, pane["id"])
        if screen is not None:
            panes.append(pane | {"screen": screen})
    return panes


def overview_lists(client: "MuxClient") -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """Every pane, this mux's and each host's that is up, and the screen text (by key)
    of those the overview's feed does not watch itself: this mux's that do not run, and
    every host's (read again at each listing)."""
    from muxctl.errors import RemoteError

    panes = pane_entries(client)
    (hosts,) = client.call("ListHosts")
    for host in hosts:
        if host["state"].value == "up":
            # (a link that went down meanwhile: its panes are listed once it is up again)
            with contextlib.suppress(RemoteError):
                panes += pane_entries(client, str(host["name"].value))
    texts = {}
    for pane in panes:
        unwatched = pane["host"] or pane["state"] != "running"
        if unwatched and (text := screen_text(client, pane["id"], pane["host"])) is not None:
            texts[pane["key"]] = text
    return panes, texts
