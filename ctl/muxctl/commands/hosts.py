"""muxctl hosts [add NAME DESTINATION | rm NAME]: the satellites this mux drives
(docs/federation.md)."""

import argparse
from typing import TYPE_CHECKING

from muxctl.commands.command import ServiceCommand
from muxctl.output import print_json, print_table, unwrap

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    add = actions.add_parser("add", help="add a host: NAME DESTINATION (user@host or an ssh alias)")
    add.add_argument("name", help="the host's name here: letters, digits, '_'")
    add.add_argument("destination", help="what ssh connects to: user@host or an alias")
    remove = actions.add_parser("rm", help="remove a host (its panes there are untouched)")
    remove.add_argument("name")
    for action in (add, remove):
        action.add_argument(
            "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON"
        )


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    from muxctl.wire import Variant

    if args.action == "add":
        options = {"destination": Variant("s", args.destination)}
        client.call("AddHost", body=[args.name, options])
        if args.json:
            print_json({"name": args.name, "added": True})
        return 0
    if args.action == "rm":
        client.call("RemoveHost", body=[args.name])
        if args.json:
            print_json({"name": args.name, "removed": True})
        return 0
    (hosts,) = client.call("ListHosts")
    entries = [unwrap(host) for host in hosts]
    if args.json:
        print_json(entries)
        return 0
    rows = [
        [e["name"], e["state"], e["destination"], f"{e['features']:#x}", e["last_error"]]
        for e in entries
    ]
    print_table(["NAME", "STATE", "DESTINATION", "FEATURES", "LAST ERROR"], rows)
    return 0


COMMAND = ServiceCommand(
    name="hosts",
    help="list the hosts this mux drives over ssh; add or remove one",
    add_arguments=add_arguments,
    run=run,
)
