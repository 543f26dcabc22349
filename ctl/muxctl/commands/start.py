"""muxctl start ID | --all: start a pane held by `restore = "ask"` or `"lazy"` (SPEC §13,
Start); --all starts every held pane ListPanes lists."""

import argparse
import sys
from typing import TYPE_CHECKING

from muxctl.arguments import pane_id
from muxctl.commands.command import ServiceCommand
from muxctl.commands.status import HELD
from muxctl.completing import PANE_IDS, complete_with
from muxctl.errors import EXIT_USAGE, CtlError
from muxctl.output import print_json, unwrap

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group()
    complete_with(which.add_argument("id", nargs="?", type=pane_id, help="pane id"), PANE_IDS)
    which.add_argument("--all", action="store_true", help="start every pane waiting to start")


def check(args: argparse.Namespace) -> None:
    if args.id is None and not args.all:
        raise CtlError("give a pane id, or --all", EXIT_USAGE)


def held_panes(client: "MuxClient") -> list[int]:
    (entries,) = client.call("ListPanes")
    return sorted(pane["id"] for pane in map(unwrap, entries) if pane["state"] == HELD)


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    wanted = held_panes(client) if args.all else [args.id]
    started: list[int] = []
    failed: CtlError | None = None
    for pane in wanted:
        try:
            client.call("Start", "t", [pane])
        except CtlError as e:
            if not args.all:
                raise
            # One that could not start (it was started or dismissed meanwhile, or its
            # program is gone) does not keep the others waiting.
            print(f"muxctl: pane {pane}: {e.message}", file=sys.stderr)
            failed = failed or e
            continue
        started.append(pane)
    if args.json:
        print_json({"started": started})
    elif args.all and not wanted:
        print("no pane is waiting to start")
    else:
        for pane in started:
            print(f"started pane {pane}")
    return failed.exit_status if failed is not None else 0


COMMAND = ServiceCommand(
    name="start",
    help='start a pane waiting to start (restore = "ask" or "lazy"), or --all of them',
    add_arguments=add_arguments,
    check=check,
    run=run,
)
