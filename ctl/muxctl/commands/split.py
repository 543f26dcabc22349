"""muxctl split ID [--horizontal|--vertical] [--ratio R] [options] [-- CMD...]: a new
pane beside pane ID, in its window (docs/windows.md#muxctl)."""

import argparse
from typing import TYPE_CHECKING

from muxctl.arguments import add_pane_id, rest_as_typed
from muxctl.commands.command import ServiceCommand
from muxctl.commands.spawn import add_launch_arguments, print_started
from muxctl.commands.spawn import check as check_launch
from muxctl.errors import EXIT_USAGE, CtlError

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(parser)
    add_pane_id(parser)
    # The rest: split's options after the pane id, then `--` and the program. (argparse
    # cannot take options after a positional and then a program's own words.)
    parser.add_argument("rest", nargs=argparse.REMAINDER, metavar="[options] -- CMD")


def add_options(parser: argparse.ArgumentParser) -> None:
    way = parser.add_mutually_exclusive_group()
    way.add_argument(
        "--horizontal",
        dest="direction",
        action="store_const",
        const="horizontal",
        help="side by side: the new pane on the right",
    )
    way.add_argument(
        "--vertical",
        dest="direction",
        action="store_const",
        const="vertical",
        help="one above the other: the new pane below (the default, as in tmux)",
    )
    parser.set_defaults(direction="vertical")
    parser.add_argument(
        "--ratio",
        type=float,
        default=0.5,
        metavar="R",
        help="the new pane's share of the space, between 0 and 1 (default 0.5)",
    )
    add_launch_arguments(parser)


def check(args: argparse.Namespace) -> None:
    rest = rest_as_typed(args)
    options: list[str] = []
    if rest and rest[0].startswith("-"):  # split's options, then `--` and the program
        at = rest.index("--") if "--" in rest else len(rest)
        options, rest = rest[:at], rest[at + 1 :]
    args.command = rest
    if options:
        from muxctl.parser import Parser

        again = Parser(prog="muxctl split ID", add_help=False)
        add_options(again)
        again.parse_args(options, namespace=args)
    if not 0 < args.ratio < 1:
        raise CtlError(f"--ratio is between 0 and 1, not {args.ratio:g}", EXIT_USAGE)
    check_launch(args)


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    body = [args.id, args.direction, args.ratio, args.options]
    return print_started(args, *client.call("SplitPane", body=body))


COMMAND = ServiceCommand(
    name="split",
    help="start a program in a new pane beside pane ID, in its window",
    add_arguments=add_arguments,
    check=check,
    run=run,
)
