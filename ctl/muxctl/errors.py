"""Errors muxctl reports, each with the exit status SPEC §7 gives it."""

from mux.protocol.errors import short_name
from mux.protocol.names import ERROR_PREFIX

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_PRECONDITION = 3


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
        if dbus_name == ERROR_PREFIX + "InvalidArgument":
            status = EXIT_USAGE
        elif dbus_name == ERROR_PREFIX + "PreconditionFailed":
            status = EXIT_PRECONDITION
        else:
            status = EXIT_FAILURE
        super().__init__(message, status)
        self.dbus_name = dbus_name
        self.name = short_name(dbus_name)
