"""What a muxctl verb declares, in the spirit of tmux's `cmd_entry`: its name, its
help line, how it adds its arguments, an optional check and the function that runs it.

Each verb module exports one declaration, `COMMAND`; `muxctl.commands` lists the
verbs and loads only the one a command line names. A declaration names functions
and never calls them: importing a verb module must stay cheap, since `muxctl
--help` imports them all (what is heavy, such as the D-Bus client, is imported
inside the functions).
"""

import argparse
from collections.abc import Callable
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


# Plain classes, not dataclasses: muxctl imports this on every call, and dataclasses
# would load inspect (~8 ms of a ~30 ms start).
class Command:
    __slots__ = ("add_arguments", "check", "help", "name")

    def __init__(
        self, *, name: str, help: str, add_arguments: AddArguments, check: Check | None
    ) -> None:
        self.name = name  # as typed after `muxctl`
        self.help = help  # its line in `muxctl --help`
        self.add_arguments = add_arguments
        # Called before muxctl connects or starts muxd: a usage error must not start it.
        # It raises CtlError, and may leave what it worked out in the namespace.
        self.check = check


class ServiceCommand(Command):
    """A verb that talks to the service: `run` gets a connected client, which muxctl
    closes afterwards; its result is muxctl's exit status."""

    __slots__ = ("report_not_running", "run", "starts_service")

    def __init__(
        self,
        *,
        name: str,
        help: str,
        run: RunWithService,
        add_arguments: AddArguments = no_arguments,
        check: Check | None = None,
        starts_service: bool = True,
        report_not_running: ReportNotRunning | None = None,
    ) -> None:
        super().__init__(name=name, help=help, add_arguments=add_arguments, check=check)
        self.run = run
        # False for the verbs that must not start the service
        # (docs/muxctl.md#starting-the-service).
        self.starts_service = starts_service
        # Answers instead of the NotRunning error when no service runs: its result is
        # the exit status (status says so; upgrade has nothing to upgrade).
        self.report_not_running = report_not_running


class LocalCommand(Command):
    """A verb that does not need the service (install, doctor, ...): muxctl neither
    connects nor starts muxd for it; `run`'s result is muxctl's exit status."""

    __slots__ = ("run",)

    def __init__(
        self,
        *,
        name: str,
        help: str,
        run: RunLocally,
        add_arguments: AddArguments = no_arguments,
        check: Check | None = None,
    ) -> None:
        super().__init__(name=name, help=help, add_arguments=add_arguments, check=check)
        self.run = run
