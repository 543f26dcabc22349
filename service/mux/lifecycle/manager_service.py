"""The Manager's view of the lifecycle (mux.dbus.service.ManagerService): snapshots,
upgrades, what the last start could not restore, the history of snapshots."""

from dataclasses import dataclass

from dbus_fast import Variant

from mux.lifecycle.history_restore import HistoryRestore
from mux.lifecycle.session_keeper import SessionKeeper
from mux.lifecycle.upgrader import Upgrader
from mux.protocol.restore_options import RestoreOptions
from mux.protocol.restore_problems import UnrestoredPane


@dataclass(frozen=True)
class MuxdService:
    keeper: SessionKeeper
    upgrader: Upgrader
    history: HistoryRestore

    async def snapshot(self) -> tuple[str, int]:
        return await self.keeper.snapshot()

    async def upgrade(self) -> None:
        await self.upgrader.upgrade()

    def unrestored_panes(self) -> list[UnrestoredPane]:
        return self.keeper.unrestored_panes()

    async def snapshots(self) -> list[dict[str, Variant]]:
        return await self.history.snapshots()

    async def restore_snapshot(
        self, generation: int, options: RestoreOptions
    ) -> list[dict[str, Variant]]:
        return await self.history.restore(generation, options)
