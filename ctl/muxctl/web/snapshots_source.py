"""The history of snapshots for the web view, over D-Bus (blocking: asked from the web
server's one D-Bus thread): the list, a snapshot's dry run with pictures of its
panes' saved contents, a restore of some of its panes, and starting a held pane."""

from datetime import datetime
from typing import TYPE_CHECKING, Any

from mux.protocol.regions import Rect
from muxctl.output import unwrap
from muxctl.pane_screen import PaneScreen
from muxctl.web.thumbnails import Rows, rows_of_dump
from muxctl.wire import Variant

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def _plain(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [unwrap(entry) for entry in entries]


def snapshots(client: "MuxClient") -> list[dict[str, Any]]:
    (entries,) = client.call("ListSnapshots")
    listed = _plain(entries)
    for entry in listed:
        entry["local_time"] = datetime.fromtimestamp(entry["time"]).strftime("%Y-%m-%d %H:%M:%S")
    return listed


def dry_run(client: "MuxClient", generation: int) -> list[dict[str, Any]]:
    """What a restore of the whole snapshot would start, each pane with a picture of the
    end of its saved contents (`screen`: rows of runs, muxctl.web.thumbnails)."""
    options = {"dry_run": Variant("b", True), "contents": Variant("b", True)}
    (entries,) = client.call("RestoreSnapshot", body=[generation, options])
    planned = []
    for entry in _plain(entries):
        contents = bytes(entry.pop("contents", b""))
        entry["screen"] = picture(contents, entry.get("rows", 24), entry.get("cols", 80))
        planned.append(entry)
    return planned


def picture(contents: bytes, rows: int, cols: int) -> Rows:
    """Saved contents (text, SGR, CR LF) drawn on a screen of the pane's size, as the
    overview draws a pane's (muxctl.pane_screen)."""
    screen = PaneScreen(Rect(0, 0, rows, cols))
    screen.feed(contents)
    return rows_of_dump(screen.dump(), rows, cols)


def restore(client: "MuxClient", generation: int, panes: list[int]) -> list[dict[str, Any]]:
    """The snapshot's `panes` (its own ids) started beside what runs."""
    options = {"panes": Variant("at", panes)}
    (entries,) = client.call("RestoreSnapshot", body=[generation, options])
    return _plain(entries)


def start(client: "MuxClient", pane: int) -> None:
    client.call("Start", body=[pane])
