"""Public names of the contract (docs/dbus-api.md, docs/paths.md): bus name, object paths,
interfaces, feature bits."""

from typing import Final, Literal

BUS_NAME: Final = "org.mux.Mux1"
ROOT_PATH: Final = "/org/mux/Mux1"
PANE_PATH_PREFIX: Final = "/org/mux/Mux1/pane/"
MANAGER_INTERFACE: Final = "org.mux.Mux1.Manager"
PANE_INTERFACE: Final = "org.mux.Mux1.Pane"
ERROR_PREFIX: Final = "org.mux.Mux1.Error."

# Features bit flags (docs/dbus-api.md).
FEATURE_CONDITIONAL_KILL: Final = 0x00200000


# Where a pane's working directory is known from (docs/dbus-api.md#pane-objects).
CwdSource = Literal["launch", "shell", "process"]


def pane_path(pane_id: int) -> str:
    return f"{PANE_PATH_PREFIX}{pane_id}"
