"""Who started a pane and whether anyone else has used it since (SPEC §5).

A pane that came from `Spawn` records the connection that spawned it. Use is
marked, before the action, at two choke points only: the attach hub (every
subscription to a pane's output: the attach socket, OpenAttach) and the D-Bus
dispatch of every method that drives or reads a pane (SendInput, Resize,
Signal, GetScreen, OpenAttach). A glance counts. The spawner's own use does
not: the exemption belongs to the spawner, whoever later asks for the kill.
Panes rebuilt from a snapshot have no record, so a condition about them refuses.
"""

from dataclasses import dataclass

UNATTACHED_SINCE_SPAWN = "UNATTACHED_SINCE_SPAWN"
CONDITIONS = (UNATTACHED_SINCE_SPAWN,)


@dataclass
class SpawnRecord:
    spawner: str  # the unique bus name of the connection that called Spawn
    used_by_others: bool = False

    def mark_use(self, user: str | None) -> None:
        """`user`: a bus connection's unique name; None for a user that is no bus
        connection (an attach socket client), never the spawner."""
        if user != self.spawner:
            self.used_by_others = True
