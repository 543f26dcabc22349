"""The environment a pane's program starts with."""

from collections.abc import Mapping

# Variables that describe the service's own relation to its supervisor. A
# program in a pane that inherited them would believe it was socket-activated
# or should notify systemd (tmux#4035), so they never reach a pane.
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
    }
)


def pane_environment(
    service_env: Mapping[str, str],
    overrides: Mapping[str, str],
    *,
    term: str,
    pane_id: int,
) -> dict[str, str]:
    env = {k: v for k, v in service_env.items() if k not in SERVICE_ONLY_VARIABLES}
    env["TERM"] = term
    env["MUX_PANE"] = str(pane_id)
    env.update(overrides)  # what the client asked for explicitly wins
    return env
