"""muxctl send ID TEXT: type text into a pane."""

import argparse
import os
import sys
from typing import TYPE_CHECKING

from muxctl.arguments import add_pane_id
from muxctl.commands.command import ServiceCommand
from muxctl.errors import EXIT_USAGE, CtlError
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.client import MuxClient


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_pane_id(parser)
    parser.add_argument("text", nargs="?", help="the text (UTF-8)")
    parser.add_argument("--enter", action="store_true", help="press Enter after the text")
    parser.add_argument("--stdin", action="store_true", help="send what standard input holds")


# One D-Bus message carries at most 64 MiB of array data (the spec's limit).
MAX_BYTES = (64 << 20) - 4096


def check(args: argparse.Namespace) -> None:
    if args.stdin == (args.text is not None):
        raise CtlError("give either TEXT or --stdin", EXIT_USAGE)
    # fsencode keeps bytes that are not UTF-8 exactly as they were given.
    data = sys.stdin.buffer.read(MAX_BYTES + 1) if args.stdin else os.fsencode(args.text)
    if args.enter:
        data += b"\r"
    if len(data) > MAX_BYTES:
        raise CtlError(f"send takes at most {MAX_BYTES} bytes at once; split the input", EXIT_USAGE)
    args.data = data


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    data = args.data
    client.call("SendInput", body=[args.id, data])
    if args.json:
        print_json({"id": args.id, "bytes": len(data)})
    return 0


COMMAND = ServiceCommand(
    name="send",
    help="send text to a pane's terminal, as if typed",
    add_arguments=add_arguments,
    check=check,
    run=run,
)
