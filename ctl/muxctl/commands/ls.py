"""muxctl ls: list the panes."""

import argparse
import shlex
import sys
from typing import TYPE_CHECKING, Any

from mux.protocol.names import EXIT_STATUS_NOT_STARTED, EXIT_STATUS_UNKNOWN
from muxctl.commands.command import ServiceCommand
from muxctl.errors import EXIT_USAGE, CtlError
from muxctl.not_running import report_not_running
from muxctl.output import print_json, print_table, unwrap

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def pane_state(pane: dict[str, Any]) -> str:
    """What a pane is doing, in a word (also the web overview's)."""
    if pane["state"] in ("running", "held"):  # held: restored, waiting for `muxctl start`
        return str(pane["state"])
    status = pane["exit_status"]
    if status == EXIT_STATUS_NOT_STARTED:
        return "not-restored"  # a place holder: its screen says why
    return "exited(unknown)" if status == EXIT_STATUS_UNKNOWN else f"exited({status})"


def _command(pane: dict[str, Any]) -> str:
    """What runs: the command an integrated shell is running, else the pane's program."""
    if pane.get("shell_state") == "command" and pane.get("command"):
        return str(pane["command"])
    return shlex.join(pane["argv"])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--all-hosts",
        action="store_true",
        help="also list the panes of every host this mux drives (a HOST column)",
    )


def _panes(client: "MuxClient", path: str | None = None) -> list[dict[str, Any]]:
    (entries,) = client.call("ListPanes", path=path)
    return sorted((unwrap(e) for e in entries), key=lambda p: p["id"])


def _every_host(client: "MuxClient") -> tuple[list[dict[str, Any]], list[str]]:
    """This mux's panes (host ""), then each up host's; and what could not be listed."""
    from mux.protocol.names import ROOT_PATH, host_path
    from muxctl.errors import RemoteError

    panes = [{**p, "host": ""} for p in _panes(client, ROOT_PATH)]
    (hosts,) = client.call("ListHosts", path=ROOT_PATH)
    missing = []
    for host in sorted((unwrap(h) for h in hosts), key=lambda h: h["name"]):
        if host["state"] != "up":
            missing.append(f"{host['name']}: {host['state']}")
            continue
        try:
            panes += [{**p, "host": host["name"]} for p in _panes(client, host_path(host["name"]))]
        except RemoteError as e:
            missing.append(f"{host['name']}: {e.message}")
    return panes, missing


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    missing: list[str] = []
    if args.all_hosts and args.host is not None:
        raise CtlError("give either --host or --all-hosts, not both", EXIT_USAGE)
    if args.all_hosts:
        panes, missing = _every_host(client)
    else:
        panes = _panes(client)
    for why in missing:
        print(f"muxctl: not listed: {why}", file=sys.stderr)
    if args.json:
        print_json(panes)
        return 0
    rows = []
    for p in panes:
        state = pane_state(p)
        host = [p["host"] or "-"] if args.all_hosts else []
        rows.append(
            [
                *host,
                str(p["id"]),
                str(p["window"]),
                str(p["pid"] or "-"),
                state,
                f"{p['cols']}x{p['rows']}",
                p["title"],
                p["cwd"],
                _command(p),
            ]
        )
    headers = ["ID", "WIN", "PID", "STATE", "SIZE", "TITLE", "CWD", "COMMAND"]
    print_table(["HOST", *headers] if args.all_hosts else headers, rows)
    return 0


COMMAND = ServiceCommand(
    name="ls",
    help="list panes (never starts mux)",
    add_arguments=add_arguments,
    run=run,
    starts_service=False,  # a look must not start mux and re-run every saved program
    report_not_running=report_not_running,
)
