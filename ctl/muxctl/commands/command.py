"""What a muxctl verb declares, in the spirit of tmux's `cmd_entry`: its name, its
help line, how it adds its arguments, an optional check and the function that runs it.

Each verb module exports one declaration, `COMMAND`; `muxctl.commands.COMMANDS`
lists them all. A declaration names functions and never calls them: importing
a verb module must stay cheap, since `muxctl --help` imports them all (what is
heavy, such as the D-Bus client, is imported inside the functions).
"""

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from muxctl.client import MuxClient
    from muxctl.errors import NotRunning

AddArguments = Callable[[argparse.ArgumentParser], None]
Check = Callable[[argparse.Namespace], None]
RunWithService = Callable[[argparse.Namespace, "MuxClient"], int]
RunLocally = Callable[[argparse.Namespace], int]
ReportNotRunning = Callable[[argparse.Namespace, "NotRunning"], int]


def no_arguments(parser: argparse.ArgumentParser) -> None:
    """For the verbs that take no arguments but the common ones."""


@dataclass(frozen=True, kw_only=True)
class Command:
    name: str  # as typed after `muxctl`
    help: str  # its line in `muxctl --help`
    add_arguments: AddArguments = no_arguments
    # Called before muxctl connects or starts muxd: a usage error must not start it.
    # It raises CtlError, and may leave what it worked out in the namespace.
    check: Check | None = None


@dataclass(frozen=True, kw_only=True)
class ServiceCommand(Command):
    """A verb that talks to the service: `run` gets a connected client, which muxctl
    closes afterwards; its result is muxctl's exit status."""

    run: RunWithService
    # False for the verbs that must not start the service (docs/muxctl.md#starting-the-service).
    starts_service: bool = True
    # Answers instead of the NotRunning error when no service runs: its result is the
    # exit status (status says so; upgrade has nothing to upgrade).
    report_not_running: ReportNotRunning | None = None


@dataclass(frozen=True, kw_only=True)
class LocalCommand(Command):
    """A verb that does not need the service (install, doctor, ...): muxctl neither
    connects nor starts muxd for it; `run`'s result is muxctl's exit status."""

    run: RunLocally
