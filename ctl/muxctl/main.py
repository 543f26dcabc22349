"""muxctl entry point: parse the verb, connect, run it, map failures to exit statuses.

Imports stay lazy: `--help` and usage errors never load the D-Bus client, and no
verb but attach loads asyncio.
"""

import argparse
import os
import sys

from muxctl.commands import VERBS, all_commands, load
from muxctl.commands.command import LocalCommand, ServiceCommand
from muxctl.completing import HOSTS, complete_with
from muxctl.errors import EXIT_FAILURE, EXIT_USAGE, CtlError, NotRunning
from muxctl.output import for_a_person
from muxctl.parser import Parser


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """muxctl's parser: with `verb` (one of VERBS), only that verb's; else every verb's
    (for --help, an unknown verb, the completion script and the man page)."""
    common = Parser(add_help=False)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    parser = Parser(prog="muxctl", description="Control the mux terminal session service.")
    parser.add_argument("--json", action="store_true", default=False, help="print JSON")
    parser.add_argument(
        "--no-start", action="store_true", help="do not start muxd when it is not running"
    )
    host = parser.add_argument(
        "--host",
        metavar="NAME",
        help="act on the panes of that host, through this mux (muxctl hosts lists them)",
    )
    complete_with(host, HOSTS)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for command in all_commands() if verb is None else (load(verb),):
        sub = verbs.add_parser(command.name, help=command.help, parents=[common])
        command.add_arguments(sub)
        sub.set_defaults(command_entry=command)
    return parser


def _run(command: ServiceCommand, args: argparse.Namespace) -> int:
    from muxctl.client import connect

    try:
        client = connect(autostart=command.starts_service and not args.no_start)
    except NotRunning as e:
        if command.report_not_running is not None:
            return command.report_not_running(args, e)
        if args.no_start:
            e.message += "; --no-start was given, so muxctl did not start it"
        raise
    if args.host is not None:
        from mux.protocol.names import host_path

        client.manager_path = host_path(args.host)
    try:
        return command.run(args, client)
    finally:
        client.close()


# The verbs that act on panes, and so on a host's panes with --host (docs/muxctl.md#hosts).
HOST_VERBS = ("ls", "spawn", "kill", "kill-if", "signal", "send", "capture", "attach", "new")


def _check_host(name: str, command: ServiceCommand | LocalCommand) -> None:
    from mux.protocol.errors import InvalidArgument
    from mux.protocol.hosts import check_host_name

    if command.name not in HOST_VERBS:
        raise CtlError(f"--host goes with a pane verb ({', '.join(HOST_VERBS)})", EXIT_USAGE)
    try:
        check_host_name(name)
    except InvalidArgument as e:
        raise CtlError(e.message, EXIT_USAGE) from None


def _verb(argv: list[str]) -> str | None:
    """The verb a command line names, if it names one: the first word that is neither
    an option nor the value of --host."""
    words = iter(argv)
    for word in words:
        if word == "--host":
            next(words, None)
        elif word == "--" or not word.startswith("-"):
            return word if word in VERBS else None
    return None


def main(argv: list[str] | None = None) -> int:
    # Everything muxctl prints is for a person unless it is JSON (ASCII): titles, paths,
    # errors from muxd or a satellite, argparse's complaints alike have their control
    # characters escaped, in this one place (muxctl.output, SPEC §12).
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = for_a_person(stdout), for_a_person(stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(_verb(argv)).parse_args(argv)
    args.words = argv  # as typed: argparse drops a `--` that a check may need to see
    command: ServiceCommand | LocalCommand = args.command_entry
    try:
        if args.host is not None:
            _check_host(args.host, command)
        if command.check is not None:
            command.check(args)  # a usage error must not start muxd
        if isinstance(command, LocalCommand):
            return command.run(args)
        return _run(command, args)
    except BrokenPipeError:
        # Our reader went away (`muxctl ls | head -1`): stop quietly, like cat.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13
    except CtlError as e:
        print(f"muxctl: {e.message}", file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt:
        return 130
    except Exception as e:
        if os.environ.get("MUXCTL_DEBUG"):
            raise
        print(f"muxctl: unexpected error ({type(e).__name__}: {e})", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
