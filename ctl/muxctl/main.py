"""muxctl entry point: parse the verb, connect, run it, map failures to exit statuses.

Imports stay lazy: `--help` and usage errors never load asyncio or D-Bus.
"""

import argparse
import os
import sys

from muxctl.commands import COMMANDS
from muxctl.errors import EXIT_FAILURE, CtlError, NotRunning


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    parser = argparse.ArgumentParser(
        prog="muxctl", description="Control the mux terminal session service."
    )
    parser.add_argument("--json", action="store_true", default=False, help="print JSON")
    parser.add_argument(
        "--no-start", action="store_true", help="do not start muxd when it is not running"
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for command in COMMANDS:
        sub = verbs.add_parser(command.NAME, help=command.HELP, parents=[common])
        command.add_arguments(sub)
        sub.set_defaults(handler=command)
    return parser


async def _run(args: argparse.Namespace) -> int:
    from muxctl.client import connect

    starts_service = getattr(args.handler, "STARTS_SERVICE", True)
    try:
        client = await connect(autostart=starts_service and not args.no_start)
    except NotRunning as e:
        report = getattr(args.handler, "report_not_running", None)
        if report is not None:
            not_running_status: int = report(args, e)
            return not_running_status
        if args.no_start:
            e.message += "; --no-start was given, so muxctl did not start it"
        raise
    try:
        status: int = await args.handler.run(args, client)
        return status
    finally:
        client.close()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        check = getattr(args.handler, "check", None)
        if check is not None:
            check(args)  # a usage error must not start muxd
        run_local = getattr(args.handler, "run_local", None)
        if run_local is not None:
            local_status: int = run_local(args)  # verbs that do not talk to the service
            return local_status
        import asyncio

        return asyncio.run(_run(args))
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
