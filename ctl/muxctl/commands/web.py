"""muxctl web: mux in a browser, served by this process (docs/web.md)."""

import argparse
import ipaddress
from typing import TYPE_CHECKING

from muxctl.commands.command import ServiceCommand
from muxctl.errors import EXIT_USAGE, CtlError

if TYPE_CHECKING:
    from muxctl.client import MuxClient

DEFAULT_LISTEN = "127.0.0.1:0"  # loopback, a port nobody uses


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--listen",
        metavar="ADDR:PORT",
        default=DEFAULT_LISTEN,
        help="where to listen: a loopback address and a port (0: any free one; default "
        f"{DEFAULT_LISTEN})",
    )
    parser.add_argument(
        "--no-open", action="store_true", help="print the login link only, open no browser"
    )


def check(args: argparse.Namespace) -> None:
    address, _, port = args.listen.rpartition(":")
    address = address.strip("[]")
    try:
        args.port = int(port)
        loopback = ipaddress.ip_address(address).is_loopback
    except ValueError:
        raise CtlError(
            f"cannot listen on {args.listen!r}: give ADDR:PORT, such as 127.0.0.1:8080",
            EXIT_USAGE,
        ) from None
    if not 0 <= args.port <= 65535:
        raise CtlError(f"cannot listen on port {args.port}: ports go from 0 to 65535", EXIT_USAGE)
    if not loopback:
        raise CtlError(
            f"{address} is not a loopback address: muxctl web listens only on this machine's "
            "own (127.0.0.1 or ::1), where no one else on the network can reach it",
            EXIT_USAGE,
        )
    args.address = address


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    from muxctl.web.serve import serve

    client.close()  # (the server makes its own, in its worker thread)
    return serve(args.address, args.port, open_browser=not args.no_open)


COMMAND = ServiceCommand(
    name="web",
    help="serve mux in a browser: every pane at a glance (prints a login link)",
    add_arguments=add_arguments,
    check=check,
    run=run,
)
