"""What `org.mux.Mux1.Manager` asks of the rest of muxd beyond the pane table.

The lifecycle layer implements it (snapshots, upgrades, the last session's
problems); the D-Bus layer below it only sees this interface.
"""

from typing import Protocol

from dbus_fast import Variant

from mux.protocol.restore_options import RestoreOptions
from mux.protocol.restore_problems import UnrestoredPane


class ManagerService(Protocol):
    async def snapshot(self) -> tuple[str, int]:
        """Save now; (path, generation) once the snapshot is durable on disk."""
        ...

    async def upgrade(self) -> None:
        """Refuse (Unavailable) or prove the new program starts; the exec follows."""
        ...

    def unrestored_panes(self) -> list[UnrestoredPane]:
        """The last session's panes not started again (id 0: the whole session)."""
        ...

    async def snapshots(self) -> list[dict[str, Variant]]:
        """The history of snapshots, newest first (ListSnapshots' entries)."""
        ...

    async def restore_snapshot(
        self, generation: int, options: RestoreOptions
    ) -> list[dict[str, Variant]]:
        """Start panes of a snapshot of the history beside what runs (RestoreSnapshot)."""
        ...

    async def forget_contents(self) -> None:
        """Every saved pane contents and their key, gone (ForgetContents)."""
        ...
