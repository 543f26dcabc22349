"""Public names of the contract (docs/dbus-api.md, docs/paths.md): bus name, object paths,
interfaces, feature bits."""

from typing import Final, Literal

BUS_NAME: Final = "org.mux.Mux1"
ROOT_PATH: Final = "/org/mux/Mux1"
PANE_PATH_PREFIX: Final = "/org/mux/Mux1/pane/"
HOST_PATH_PREFIX: Final = "/org/mux/Mux1/host/"
WINDOW_PATH_PREFIX: Final = "/org/mux/Mux1/window/"
MANAGER_INTERFACE: Final = "org.mux.Mux1.Manager"
PANE_INTERFACE: Final = "org.mux.Mux1.Pane"
WINDOW_INTERFACE: Final = "org.mux.Mux1.Window"
ERROR_PREFIX: Final = "org.mux.Mux1.Error."

# Features bit flags (docs/dbus-api.md).
FEATURE_CONDITIONAL_KILL: Final = 0x00200000
FEATURE_LINKS: Final = 0x00400000  # RegisterLink (docs/federation.md#links)


# ExitStatus of a pane whose program ended while muxd was not its parent (it
# ended while no muxd ran, or after a restarted muxd re-adopted it): exit codes
# are 0-255 and signals negative, so this value is no status a program can have.
EXIT_STATUS_UNKNOWN: Final = 256
# ExitStatus of a pane of the last session that could not be started again: it holds
# its place in its window, with no process (Pid 0), and ListRestoreProblems says why.
EXIT_STATUS_NOT_STARTED: Final = 257

# Where a pane's working directory is known from (docs/dbus-api.md#pane-objects).
CwdSource = Literal["launch", "shell", "process"]


def pane_path(pane_id: int) -> str:
    return f"{PANE_PATH_PREFIX}{pane_id}"


def window_path(window_id: int) -> str:
    return f"{WINDOW_PATH_PREFIX}{window_id}"


def host_path(name: str) -> str:
    return f"{HOST_PATH_PREFIX}{name}"
