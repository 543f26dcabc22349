"""muxctl title ID TEXT: set a pane's title (SetTitle), kept over the titles its program
sets, as tmux's `select-pane -T`; an empty TEXT gives the title back to the program."""

import argparse
from typing import TYPE_CHECKING

from muxctl.arguments import add_pane_id
from muxctl.commands.command import ServiceCommand
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_pane_id(parser)
    parser.add_argument("text", help="its new title (empty: the program's own again)")


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    client.call("SetTitle", body=[args.id, args.text])
    if args.json:
        (entries,) = client.call("ListPanes")
        titles = [e["title"].value for e in entries if e["id"].value == args.id]
        print_json({"id": args.id, "title": titles[0] if titles else args.text})
    return 0


COMMAND = ServiceCommand(
    name="title",
    help="set a pane's title (over the program's)",
    add_arguments=add_arguments,
    run=run,
)
