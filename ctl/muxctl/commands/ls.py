"""muxctl ls: list the panes."""

import argparse
import shlex
from typing import TYPE_CHECKING, Any

from mux.protocol.names import EXIT_STATUS_UNKNOWN
from muxctl.commands.command import ServiceCommand
from muxctl.output import print_json, print_table, unwrap

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def _state(pane: dict[str, Any]) -> str:
    if pane["state"] == "running":
        return "running"
    status = pane["exit_status"]
    return "exited(unknown)" if status == EXIT_STATUS_UNKNOWN else f"exited({status})"


def _command(pane: dict[str, Any]) -> str:
    """What runs: the command an integrated shell is running, else the pane's program."""
    if pane.get("shell_state") == "command" and pane.get("command"):
        return str(pane["command"])
    return shlex.join(pane["argv"])


async def run(args: argparse.Namespace, client: "MuxClient") -> int:
    (entries,) = await client.call("ListPanes")
    panes = sorted((unwrap(e) for e in entries), key=lambda p: p["id"])
    if args.json:
        print_json(panes)
        return 0
    rows = []
    for p in panes:
        state = _state(p)
        rows.append(
            [
                str(p["id"]),
                str(p["window"]),
                str(p["pid"]),
                state,
                f"{p['cols']}x{p['rows']}",
                p["title"],
                p["cwd"],
                _command(p),
            ]
        )
    print_table(["ID", "WIN", "PID", "STATE", "SIZE", "TITLE", "CWD", "COMMAND"], rows)
    return 0


COMMAND = ServiceCommand(name="ls", help="list panes", run=run)
