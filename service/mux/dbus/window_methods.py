"""The window methods and signal of `org.mux.Mux1.Manager` (docs/windows.md#manager-methods),
a part of `ManagerInterface` of their own: thin, like the others (the checks in
mux.protocol.window_options, the work in mux.panes.windows)."""

from typing import Annotated

from dbus_fast import Variant
from dbus_fast.annotations import DBusSignature
from dbus_fast.service import ServiceInterface, dbus_signal

from mux.dbus.caller import current_caller
from mux.dbus.errors import replies_with_dbus_errors
from mux.dbus.method_signatures import manager_method
from mux.dbus.window_iface import window_entry
from mux.panes.table import PaneTable
from mux.protocol.names import pane_path
from mux.protocol.spawn_options import parse_spawn_options
from mux.protocol.window_options import parse_split, parse_window_update

T = Annotated[int, DBusSignature("t")]


def _plain(options: dict[str, Variant]) -> dict[str, tuple[str, object]]:
    return {name: (variant.signature, variant.value) for name, variant in options.items()}


class WindowMethods(ServiceInterface):
    table: PaneTable

    @dbus_signal()
    def WindowChanged(self, window_id: int) -> T:
        return window_id

    @manager_method
    @replies_with_dbus_errors
    def SplitPane(
        self, pane_id: int, direction: str, ratio: float, options: dict[str, Variant]
    ) -> tuple[int, bytes, str]:
        split = parse_split(direction, ratio)
        request = parse_spawn_options({k: v for k, v in _plain(options).items() if k != "window"})
        pane = self.table.split(pane_id, *split, request, spawner=current_caller())
        instance = self.table.ids.token if request.bind_instance else b""
        return (pane.id, instance, pane_path(pane.id))

    @manager_method
    @replies_with_dbus_errors
    def ListWindows(self) -> list[dict[str, Variant]]:
        return [window_entry(window) for window in self.table.windows]

    @manager_method
    @replies_with_dbus_errors
    def SetWindow(self, window_id: int, props: dict[str, Variant]) -> None:
        self.table.windows.update(window_id, parse_window_update(_plain(props)))
