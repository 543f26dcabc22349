"""muxctl completion bash|zsh|fish: print the shell completion script.

The script is generated from muxctl's own argument parser by shtab, so it can never
disagree with the verbs; pane ids and host names come from the running service when
the user presses Tab (muxctl.completing).
"""

import argparse
import sys

from muxctl.commands.command import LocalCommand

SHELLS = ("bash", "zsh", "fish")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS)


def script(shell: str) -> str:
    import shtab

    from muxctl.completing import PREAMBLE
    from muxctl.main import build_parser

    return shtab.complete(build_parser(), shell, preamble=PREAMBLE[shell])


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(script(args.shell))
    return 0


COMMAND = LocalCommand(
    name="completion",
    help="print the shell completion script (bash, zsh or fish)",
    add_arguments=add_arguments,
    run=run,
)
