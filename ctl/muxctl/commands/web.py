"""muxctl web: mux in a browser, served by this process (docs/web.md)."""

import argparse
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
        help="where to listen (0: any free port; default "
        f"{DEFAULT_LISTEN}); an address other than loopback needs --cert and --key",
    )
    parser.add_argument(
        "--socket",
        metavar="PATH",
        help="listen on a Unix socket (mode 0600, for a reverse proxy run as you) instead",
    )
    parser.add_argument("--cert", metavar="FILE", help="TLS: the certificate chain (PEM)")
    parser.add_argument("--key", metavar="FILE", help="TLS: the certificate's private key (PEM)")
    parser.add_argument(
        "--public-url",
        metavar="URL",
        help="the address browsers use (a proxy's, or a name for this machine): the only "
        "Host and Origin taken",
    )
    parser.add_argument(
        "--no-open", action="store_true", help="print the login link only, open no browser"
    )
    parser.add_argument(
        "--login",
        action="store_true",
        help="serve nothing: open (or with --no-open print) a fresh login link of the "
        "muxctl web already running, starting mux-web.service if none is",
    )


def check(args: argparse.Namespace) -> None:
    from muxctl.web.listening import BadListening, plan

    try:
        args.listening = plan(args.listen, args.socket, args.cert, args.key, args.public_url)
    except BadListening as e:
        raise CtlError(str(e), EXIT_USAGE) from None


def run(args: argparse.Namespace, client: "MuxClient") -> int:
    client.close()  # (the server makes its own, in its worker thread)
    if args.login:
        from muxctl.web.login import log_in

        return log_in(open_browser=not args.no_open)
    from muxctl.web.listening import BadListening, handed_over
    from muxctl.web.serve import inherited_socket, serve

    sock = inherited_socket()
    if sock is not None:  # (mux-web.socket: where it listens is the socket's)
        try:
            args.listening = handed_over(
                sock.family, sock.getsockname(), args.cert, args.key, args.public_url
            )
        except BadListening as e:
            raise CtlError(f"mux-web.socket: {e}", EXIT_USAGE) from None
    return serve(args.listening, open_browser=not args.no_open, sock=sock)


COMMAND = ServiceCommand(
    name="web",
    help="serve mux in a browser: every pane at a glance (prints a login link)",
    add_arguments=add_arguments,
    check=check,
    run=run,
)
