"""Failures that stop muxd before or while it starts: a person must fix them."""

from mux.protocol.exit_status import EX_ALREADY_RUNNING, EX_UNAVAILABLE


class StartupError(Exception):
    """Something a person must fix before the service can start; no traceback."""

    exit_status = EX_UNAVAILABLE


class AlreadyRunning(StartupError):
    exit_status = EX_ALREADY_RUNNING
