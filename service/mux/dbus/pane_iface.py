"""`org.mux.Mux1.Pane`: one object per pane, read-only properties (SPEC §3)."""

import re
from collections.abc import Iterable
from typing import Annotated

from dbus_fast import PropertyAccess, Variant
from dbus_fast.annotations import DBusSignature
from dbus_fast.service import ServiceInterface, dbus_property

from mux.panes.pane import Pane
from mux.protocol.names import PANE_INTERFACE

# The pane's properties (SPEC §3) and their D-Bus signatures. ListPanes
# carries the same values under snake_case keys (`list_key`).
PANE_PROPERTIES: dict[str, str] = {
    "Id": "t",
    "Pid": "u",
    "Argv": "as",
    "Cwd": "s",
    "CwdSource": "s",
    "Title": "s",
    "Window": "t",
    "State": "s",
    "ExitStatus": "i",
    "Rows": "q",
    "Cols": "q",
}


def list_key(property_name: str) -> str:
    """`CwdSource` -> `cwd_source`: the ListPanes key of a Pane property."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", property_name).lower()


def pane_property_values(pane: Pane) -> dict[str, object]:
    return {
        "Id": pane.id,
        "Pid": pane.pid,
        "Argv": list(pane.argv),
        "Cwd": pane.cwd,
        "CwdSource": pane.cwd_source,
        "Title": pane.title,
        "Window": pane.window,
        "State": str(pane.state),
        "ExitStatus": pane.exit_status,
        "Rows": pane.rows,
        "Cols": pane.cols,
    }


def pane_property_variants(pane: Pane, names: Iterable[str] | None = None) -> dict[str, Variant]:
    values = pane_property_values(pane)
    wanted = PANE_PROPERTIES if names is None else names
    return {name: Variant(PANE_PROPERTIES[name], values[name]) for name in wanted}


class PaneInterface(ServiceInterface):
    def __init__(self, pane: Pane) -> None:
        super().__init__(PANE_INTERFACE)
        self.pane = pane

    def emit_changed(self, names: Iterable[str]) -> None:
        values = pane_property_values(self.pane)
        changed = {name: values[name] for name in names if name in values}
        if changed:  # (a change of something that is no D-Bus property: nothing to say)
            self.emit_properties_changed(changed)

    @dbus_property(access=PropertyAccess.READ)
    def Id(self) -> Annotated[int, DBusSignature("t")]:
        return self.pane.id

    @dbus_property(access=PropertyAccess.READ)
    def Pid(self) -> Annotated[int, DBusSignature("u")]:
        return self.pane.pid

    @dbus_property(access=PropertyAccess.READ)
    def Argv(self) -> Annotated[list[str], DBusSignature("as")]:
        return list(self.pane.argv)

    @dbus_property(access=PropertyAccess.READ)
    def Cwd(self) -> Annotated[str, DBusSignature("s")]:
        return self.pane.cwd

    @dbus_property(access=PropertyAccess.READ)
    def CwdSource(self) -> Annotated[str, DBusSignature("s")]:
        return self.pane.cwd_source

    @dbus_property(access=PropertyAccess.READ)
    def Title(self) -> Annotated[str, DBusSignature("s")]:
        return self.pane.title

    @dbus_property(access=PropertyAccess.READ)
    def Window(self) -> Annotated[int, DBusSignature("t")]:
        return self.pane.window

    @dbus_property(access=PropertyAccess.READ)
    def State(self) -> Annotated[str, DBusSignature("s")]:
        return str(self.pane.state)

    @dbus_property(access=PropertyAccess.READ)
    def ExitStatus(self) -> Annotated[int, DBusSignature("i")]:
        return self.pane.exit_status

    @dbus_property(access=PropertyAccess.READ)
    def Rows(self) -> Annotated[int, DBusSignature("q")]:
        return self.pane.rows

    @dbus_property(access=PropertyAccess.READ)
    def Cols(self) -> Annotated[int, DBusSignature("q")]:
        return self.pane.cols
