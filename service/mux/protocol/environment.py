"""Environment variables that belong to one process's supervisor and to no child of it."""

from collections.abc import Mapping

# Variables that describe a process's own relation to its supervisor. A
# program that inherited them would believe it was socket-activated or should
# notify systemd (tmux#4035), so they never reach a pane, the private bus, or
# a muxd started by muxctl.
SERVICE_ONLY_VARIABLES = frozenset(
    {
        "LISTEN_FDS",
        "LISTEN_PID",
        "LISTEN_FDNAMES",
        "NOTIFY_SOCKET",
        "WATCHDOG_USEC",
        "WATCHDOG_PID",
        "DBUS_STARTER_ADDRESS",
        "DBUS_STARTER_BUS_TYPE",
        "JOURNAL_STREAM",
        "INVOCATION_ID",
        "MANAGERPID",
        "SYSTEMD_EXEC_PID",
        "MEMORY_PRESSURE_WATCH",
        "MEMORY_PRESSURE_WRITE",
        "TRIGGER_UNIT",
        "MAINPID",
        "FDSTORE",
        "MUX_FD_STORE_MAX",
    }
)


# Where an application-resurrection/1 client finds its endpoint (docs/resurrection-protocol.md).
ENDPOINT_VARIABLE = "APPLICATION_RESURRECTION_SOCKET"


def without_service_variables(environ: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k not in SERVICE_ONLY_VARIABLES}
