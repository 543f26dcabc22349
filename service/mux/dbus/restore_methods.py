"""The restore methods of `org.mux.Mux1.Manager` (docs/dbus-api.md#restore-and-history),
a part of `ManagerInterface` of their own: thin, like the others (the work in
mux.panes.held and the service's history of snapshots)."""

from dbus_fast import Variant

from mux.dbus.errors import replies_with_dbus_errors
from mux.dbus.method_signatures import manager_method
from mux.dbus.service import ManagerService
from mux.dbus.window_methods import WindowMethods
from mux.protocol.errors import NotSupported
from mux.protocol.restore_options import parse_restore_options


class RestoreMethods(WindowMethods):
    _service: ManagerService | None

    def _history(self) -> ManagerService:
        if self._service is None:
            raise NotSupported("the history of snapshots is not available in this muxd")
        return self._service

    @manager_method
    @replies_with_dbus_errors
    def Start(self, pane_id: int) -> None:
        """Start a pane held by `restore = "ask"` or `"lazy"` (mux.panes.held)."""
        self.table.held.start(self.table.get(pane_id))

    @manager_method
    @replies_with_dbus_errors
    async def ListSnapshots(self) -> list[dict[str, Variant]]:
        return await self._history().snapshots()

    @manager_method
    @replies_with_dbus_errors
    async def RestoreSnapshot(
        self, generation: int, options: dict[str, Variant]
    ) -> list[dict[str, Variant]]:
        parsed = parse_restore_options(
            {name: (variant.signature, variant.value) for name, variant in options.items()}
        )
        return await self._history().restore_snapshot(generation, parsed)

    @manager_method
    @replies_with_dbus_errors
    async def ForgetContents(self) -> None:
        """Wipe the saved contents of every pane (here and in the history) and their key."""
        await self._history().forget_contents()
