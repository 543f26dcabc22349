"""Who started a pane, whether anyone else has used it since, and the conditional kill
that rests on it (docs/dbus-api.md#conditional-kill).

A pane that came from `Spawn` records the connection that spawned it. Use is
marked, before the action, at two choke points only: the attach hub (every
subscription to a pane's output: the attach socket, OpenAttach) and the D-Bus
dispatch of every method that drives or reads a pane (SendInput, Resize,
Signal, GetScreen, OpenAttach). A glance counts. The spawner's own use does
not: the exemption belongs to the spawner, whoever later asks for the kill
(docs/dbus-api.md#what-counts-as-use). Panes rebuilt from a snapshot have no
record, so a condition about them refuses.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from mux.protocol.errors import PreconditionFailed

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


@dataclass(frozen=True)
class KillRequest:
    """A KillIf, as asked: the pane, the instance token given, the conditions."""

    pane_id: int
    instance: bytes
    conditions: Sequence[str]


def check_kill(
    request: KillRequest, token: bytes, record: SpawnRecord | None, attached_clients: int
) -> None:
    """PreconditionFailed naming what does not hold, in the documented order; nothing
    when the pane may be killed. `token`: this instance's; `record`: the pane's spawn
    record; `attached_clients`: connections the kill would close."""
    for condition in request.conditions:
        if condition not in CONDITIONS:
            raise PreconditionFailed(
                f"unknown condition {condition!r} (this mux knows: {', '.join(CONDITIONS)}); "
                "nothing was killed"
            )
    if request.instance and request.instance != token:
        raise PreconditionFailed(
            "instance: the token names another instance of mux (it has been restarted "
            f"since, and pane ids started again); pane {request.pane_id} was not killed"
        )
    if UNATTACHED_SINCE_SPAWN in request.conditions:
        _check_unattached(request, record, attached_clients)


def _check_unattached(
    request: KillRequest, record: SpawnRecord | None, attached_clients: int
) -> None:
    pane_id = request.pane_id

    def refuse(why: str) -> PreconditionFailed:
        return PreconditionFailed(f"{UNATTACHED_SINCE_SPAWN}: {why}; it was not killed")

    if not request.instance:
        raise refuse(f"needs the instance token (from a bound Spawn) to name pane {pane_id}")
    if record is None:
        raise refuse(f"pane {pane_id} did not come from Spawn in this instance of mux")
    if record.used_by_others:
        raise refuse(f"pane {pane_id} has been attached to or used by another client")
    if attached_clients:
        raise refuse(
            f"pane {pane_id} has {attached_clients} open connection(s): attached "
            "terminals, or an application's resurrection client"
        )
