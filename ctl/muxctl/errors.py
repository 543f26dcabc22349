"""Errors muxctl reports, each with its exit status (docs/muxctl.md#exit-statuses)."""

from typing import TYPE_CHECKING

from mux.protocol.errors import InvalidArgument, PreconditionFailed, short_name

if TYPE_CHECKING:
    from mux.system.socket_trust import UntrustedSocket

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_PRECONDITION = 3
# mux is not running and this command did not start it: a read-only verb (which never
# does) or --no-start. Distinct from 1, so that a script can tell "nothing there" apart
# from a failure (docs/muxctl.md#exit-statuses).
EXIT_NOT_RUNNING = 4


# A refused precondition exits 3; the service's InvalidArgument is a usage error
# (docs/muxctl.md#exit-statuses).
EXIT_STATUS_OF_ERROR = {
    InvalidArgument.dbus_name: EXIT_USAGE,
    PreconditionFailed.dbus_name: EXIT_PRECONDITION,
}


class CtlError(Exception):
    """Printed to stderr as `muxctl: <message>`; the process exits with `exit_status`."""

    def __init__(self, message: str, exit_status: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.message = message
        self.exit_status = exit_status


class NotRunning(CtlError):
    """No service answers, and muxctl was told not to start one (EXIT_NOT_RUNNING)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, EXIT_NOT_RUNNING)


class SocketRefused(CtlError):
    """A socket of mux's failed the trust checks of mux.system.socket_trust (its directory
    or the process serving it is not the user's): refused before anything was sent."""

    def __init__(self, refusal: "UntrustedSocket") -> None:
        # (a path from the environment may hold anything: shown escaped; imported here
        # only, as every muxctl call imports this module)
        from mux.protocol.visible import visible

        super().__init__(f"{visible(str(refusal))}; nothing was sent to it", EXIT_FAILURE)
        self.path = refusal.path
        self.problem = refusal.problem


class RemoteError(CtlError):
    """The service refused a call with a named D-Bus error."""

    def __init__(self, dbus_name: str, message: str) -> None:
        super().__init__(message, EXIT_STATUS_OF_ERROR.get(dbus_name, EXIT_FAILURE))
        self.dbus_name = dbus_name
        self.name = short_name(dbus_name)
