"""muxctl resize-pane ID -L|-R|-U|-D [N]: move a pane's border by N cells, as tmux's
resize-pane (docs/windows.md#muxctl)."""

import argparse
from typing import TYPE_CHECKING

from muxctl.arguments import add_pane_id
from muxctl.commands.command import ServiceCommand
from muxctl.errors import EXIT_USAGE, CtlError
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient

SIDES = {"L": "left", "R": "right", "U": "up", "D": "down"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_pane_id(parser)
    which = parser.add_mutually_exclusive_group(required=True)
    for flag, side in SIDES.items():
        which.add_argument(
            f"-{flag}",
            dest=side,
            metavar="N",
            nargs="?",
            const=1,
            type=int,
            help=f"grow it {side} by N cells (default 1)",
        )


def check(args: argparse.Namespace) -> None:
    args.side, args.cells = next(
        (side, getattr(args, side)) for side in SIDES.values() if getattr(args, side) is not None
    )
    if not 1 <= args.cells <= 10_000:
        raise CtlError("the cells to move by are a whole number from 1 to 10000", EXIT_USAGE)


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    from muxctl.window_commands import find_window, resize_pane

    _, found = find_window(client, 0, args.id)
    (entries,) = client.call("ListPanes")
    pane = next((e for e in entries if e["id"].value == args.id), None)
    if found is None or pane is None:
        raise CtlError(f"there is no pane {args.id}", EXIT_USAGE)
    window, layout, _ = found
    size = pane["cols" if args.side in ("left", "right") else "rows"].value
    resize_pane(client, window, layout, args.id, side=args.side, size=size, cells=args.cells)
    if args.json:
        print_json({"id": args.id, "window": window})
    return 0


COMMAND = ServiceCommand(
    name="resize-pane",
    help="move a pane's border, growing it one way (as tmux's resize-pane)",
    add_arguments=add_arguments,
    check=check,
    run=run,
)
