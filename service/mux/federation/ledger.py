"""The hub's ledger of the spawns it relayed, and the conditional kill that rests on it
(docs/federation.md#conditional-kill-through-the-hub).

A satellite knows only the link a call came through, so the hub keeps, for the
1024 newest spawns it relayed, who asked for each (the unique name of the
connection on the hub's bus) and whether any other consumer of the hub has
used or attached to the pane through it since. A pane the hub has forgotten is
refused: a leaked pane is cheaper than someone else's killed one. The ledger
survives redials and an upgrade (it is in the handover), not a cold restart.
"""

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from mux.panes.ledger import UNATTACHED_SINCE_SPAWN
from mux.protocol.errors import PreconditionFailed

MAX_RELAYED_SPAWNS = 1024


@dataclass(frozen=True)
class SpawnKey:
    host: str
    token: bytes
    pane_id: int


@dataclass
class RelayedSpawn:
    spawner: str | None
    used_by_others: bool = False


class HubLedger:
    def __init__(self, kept: Sequence[tuple[SpawnKey, RelayedSpawn]] = ()) -> None:
        """`kept`: what the muxd before an upgrade held, oldest first."""
        self._spawns: OrderedDict[SpawnKey, RelayedSpawn] = OrderedDict(kept)
        # Uses of ids the hub has no spawn of (yet): a spawn in flight, or none of its.
        self._unclaimed: dict[tuple[str, int], set[str | None]] = {}

    def spawned(self, key: SpawnKey, spawner: str | None) -> None:
        """Recorded when the satellite's answer is back: a use of that id relayed
        meanwhile (by someone who guessed the next id) counts against it."""
        spawn = RelayedSpawn(spawner)
        early = self._unclaimed.pop((key.host, key.pane_id), set())
        spawn.used_by_others = any(_other(user, spawner) for user in early)
        self._spawns[key] = spawn
        self._spawns.move_to_end(key)
        while len(self._spawns) > MAX_RELAYED_SPAWNS:
            self._spawns.popitem(last=False)

    def mark_use(self, host: str, pane_id: int, user: str | None) -> None:
        """Before relaying a use of the pane (any token: the caller names none)."""
        found = False
        for key, spawn in self._spawns.items():
            if key.host == host and key.pane_id == pane_id:
                found = True
                if _other(user, spawn.spawner):
                    spawn.used_by_others = True
        if not found:
            self._unclaimed.setdefault((host, pane_id), set()).add(user)
            while len(self._unclaimed) > MAX_RELAYED_SPAWNS:
                self._unclaimed.pop(next(iter(self._unclaimed)))

    def check_kill(self, key: SpawnKey, conditions: Sequence[str]) -> None:
        """PreconditionFailed when the hub cannot vouch for UNATTACHED_SINCE_SPAWN; the
        other conditions and the token are the satellite's to check."""
        if UNATTACHED_SINCE_SPAWN not in conditions:
            return

        def refuse(why: str) -> PreconditionFailed:
            return PreconditionFailed(f"{UNATTACHED_SINCE_SPAWN}: {why}; it was not killed")

        if not key.token:
            raise refuse(
                f"needs the instance token (from a bound Spawn) to name pane {key.pane_id}"
            )
        spawn = self._spawns.get(key)
        if spawn is None:
            raise refuse(
                f"this hub holds no record of spawning pane {key.pane_id} on {key.host} under "
                "that token (it keeps the newest 1024)"
            )
        if spawn.used_by_others:
            raise refuse(
                f"pane {key.pane_id} on {key.host} has been attached to or used by another "
                "client through this hub"
            )

    def records(self) -> list["RelayedRecord"]:
        """For the handover, oldest first."""
        return [
            RelayedRecord(
                host=key.host,
                token=key.token,
                pane_id=key.pane_id,
                spawner=spawn.spawner,
                used_by_others=spawn.used_by_others,
            )
            for key, spawn in self._spawns.items()
        ]


def _other(user: str | None, spawner: str | None) -> bool:
    """Whether a use by `user` is someone else's: one the hub cannot name never is
    the spawner's."""
    return user is None or spawner is None or user != spawner


class RelayedRecord(BaseModel):
    """One relayed spawn, as the upgrade's handover carries it."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, ser_json_bytes="base64", val_json_bytes="base64"
    )

    host: str
    token: bytes
    pane_id: int
    spawner: str | None
    used_by_others: bool


def relayed_ledger(records: Sequence[RelayedRecord]) -> HubLedger:
    return HubLedger(
        [
            (SpawnKey(r.host, r.token, r.pane_id), RelayedSpawn(r.spawner, r.used_by_others))
            for r in records
        ]
    )
