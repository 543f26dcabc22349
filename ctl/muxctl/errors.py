"""Errors muxctl reports, each with its exit status (docs/muxctl.md#exit-statuses)."""

from mux.protocol.errors import InvalidArgument, PreconditionFailed, short_name

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_PRECONDITION = 3


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
    """No service answers, and muxctl was told not to start one."""


class RemoteError(CtlError):
    """The service refused a call with a named D-Bus error."""

    def __init__(self, dbus_name: str, message: str) -> None:
        super().__init__(message, EXIT_STATUS_OF_ERROR.get(dbus_name, EXIT_FAILURE))
        self.dbus_name = dbus_name
        self.name = short_name(dbus_name)
