"""muxctl windows: the windows, each with its panes, focus, title and layout
(docs/windows.md#muxctl)."""

import argparse
import json
from typing import TYPE_CHECKING, Any

from muxctl.commands.command import ServiceCommand
from muxctl.not_running import report_not_running
from muxctl.output import print_json, print_table, unwrap

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def _shape(node: dict[str, Any]) -> str:
    """A layout in a few characters: `h(1,v(2,3))` is pane 1 beside 2 above 3."""
    if "pane" in node:
        return str(node["pane"])
    inner = ",".join(_shape(child) for child in node["children"])
    return f"{node['split'][0]}({inner})"


def _panes(node: dict[str, Any]) -> list[int]:
    if "pane" in node:
        return [node["pane"]]
    return [pane for child in node["children"] for pane in _panes(child)]


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    (windows,) = client.call("ListWindows")
    entries = [unwrap(window) for window in windows]
    for entry in entries:
        entry["layout"] = json.loads(entry["layout"])
        entry["geometry"] = unwrap(entry["geometry"])
    if args.json:
        print_json(entries)
        return 0
    rows = [
        [
            str(e["id"]),
            " ".join(str(pane) for pane in _panes(e["layout"])),
            str(e["focused_pane"]),
            _shape(e["layout"]),
            e["title"],
        ]
        for e in entries
    ]
    print_table(["WINDOW", "PANES", "FOCUSED", "LAYOUT", "TITLE"], rows)
    return 0


COMMAND = ServiceCommand(
    name="windows",
    help="list the windows: their panes, focus and layout (never starts mux)",
    run=run,
    starts_service=False,  # a look must not start mux and re-run every saved program
    report_not_running=report_not_running,
)
