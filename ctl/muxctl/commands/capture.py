"""muxctl capture [--raw] [--history [--lines N]] ID: print the pane's visible screen,
or with --history the lines scrolled off it too (a restored pane's old contents among
them).

The screen holds what the pane's program printed: like every text muxctl prints, its
control characters (a bidi override, a C1 control the emulator kept as a character)
are escaped visibly, unless --raw asks for the text exactly as the screen holds it
(as tmux's capture-pane prints escapes only with -e). --json keeps it exact too.
"""

import argparse
from typing import TYPE_CHECKING

from muxctl.arguments import add_pane_id
from muxctl.commands.command import ServiceCommand
from muxctl.errors import EXIT_USAGE, CtlError
from muxctl.not_running import report_not_running
from muxctl.output import exact_stdout, print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--raw",
        action="store_true",
        help="print the text exactly, control characters included (not escaped)",
    )
    parser.add_argument(
        "--history",
        action="store_true",
        help="the lines scrolled off the screen first, then the screen",
    )
    parser.add_argument(
        "--lines",
        type=int,
        default=0,
        metavar="N",
        help="with --history: the last N lines scrolled off (default: all mux keeps)",
    )
    add_pane_id(parser)


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    if args.lines < 0:
        raise CtlError("--lines must be 0 (all) or more", EXIT_USAGE)
    if args.history:
        (lines,) = client.call("GetHistory", body=[args.id, args.lines])
    else:
        (lines,) = client.call("GetScreen", body=[args.id])
    if args.json:
        print_json({"id": args.id, "lines": lines})
        return 0
    while lines and not lines[-1]:
        lines.pop()  # blank rows below the last output
    out = exact_stdout() if args.raw else None  # None: sys.stdout, which escapes
    for line in lines:
        print(line, file=out)
    return 0


COMMAND = ServiceCommand(
    name="capture",
    help="print the visible screen of a pane (never starts mux)",
    add_arguments=add_arguments,
    run=run,
    starts_service=False,  # a look must not start mux and re-run every saved program
    report_not_running=report_not_running,
)
