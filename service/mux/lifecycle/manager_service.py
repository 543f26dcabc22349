"""The Manager's view of the lifecycle (mux.dbus.service.ManagerService): snapshots,
upgrades, what the last start could not restore, the history of snapshots."""

from dataclasses import dataclass
from pathlib import Path

from dbus_fast import Variant

from mux.lifecycle.contents_keeper import ContentsKeeper
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
    contents: ContentsKeeper

    async def snapshot(self) -> tuple[str, int]:
        return await self.keeper.snapshot()

    async def upgrade(self) -> None:
        await self.upgrader.upgrade()

    def unrestored_panes(self) -> list[UnrestoredPane]:
        return self.keeper.unrestored_panes() + self.contents.problems

    async def snapshots(self) -> list[dict[str, Variant]]:
        return await self.history.snapshots()

    async def restore_snapshot(
        self, generation: int, options: RestoreOptions
    ) -> list[dict[str, Variant]]:
        return await self.history.restore(generation, options)

    async def forget_contents(self) -> None:
        history = self.keeper.archive.history

        def history_files() -> list[Path]:
            entries = history.entries()
            return [p for e in entries for p in history.contents_of(e.generation).values()]

        await self.contents.forget(history_files)
