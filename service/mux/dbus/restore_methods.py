"""The restore methods of `org.mux.Mux1.Manager` (docs/dbus-api.md#restore-and-history),
a part of `ManagerInterface` of their own: thin, like the others (the work in
mux.panes.held and the service's history of snapshots)."""


from mux.dbus.errors import replies_with_dbus_errors
from mux.dbus.method_signatures import manager_method
from mux.dbus.window_methods import WindowMethods


class RestoreMethods(WindowMethods):
    @manager_method
    @replies_with_dbus_errors
    def Start(self, pane_id: int) -> None:
        """Start a pane held by `restore = "ask"` or `"lazy"` (mux.panes.held)."""
        self.table.held.start(self.table.get(pane_id))


