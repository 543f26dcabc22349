"""`org.mux.Mux1.Manager` at `/org/mux/Mux1/host/<NAME>`: a satellite's panes, through
the hub (docs/federation.md#host-objects).

Every call is relayed over the host's link, in order, on its one connection;
ids and tokens are the satellite's. The hub keeps what it needs for
conditional kill in its ledger: each Spawn is relayed bound to the instance
(the token goes back only to a caller who asked for it), and each use of a
pane by anyone but its spawner is marked before it is relayed.
"""

from collections.abc import Callable
from typing import Annotated, Any

from dbus_fast import PropertyAccess, Variant
from dbus_fast.annotations import DBusSignature
from dbus_fast.service import ServiceInterface, dbus_property

from mux.dbus.caller import current_caller
from mux.dbus.errors import replies_with_dbus_errors
from mux.dbus.method_signatures import manager_method
from mux.federation.hub import Hub
from mux.federation.ledger import SpawnKey
from mux.federation.link import Link
from mux.federation.remote_attach import open_remote_attach
from mux.protocol.errors import NotSupported
from mux.protocol.names import FEATURE_CONDITIONAL_KILL, MANAGER_INTERFACE

T = Annotated[int, DBusSignature("t")]


class HostManagerInterface(ServiceInterface):
    def __init__(
        self, name: str, hub: Hub, hand_over_fd: Callable[[int], None] | None = None
    ) -> None:
        """`hand_over_fd(fd)`: `fd` is in the reply being sent; close it once sent
        (None: the hub's bus cannot pass fds: no OpenAttach)."""
        super().__init__(MANAGER_INTERFACE)
        self.host_name = name  # not `name`: ServiceInterface's, the interface name
        self._hub = hub
        self._hand_over_fd = hand_over_fd

    @property
    def _link(self) -> Link:
        return self._hub.link(self.host_name)

    async def _relay(self, member: str, signature: str, *body: Any) -> list[Any]:
        return await self._link.relay(member, signature, list(body))

    async def _use(self, member: str, signature: str, pane_id: int, *rest: Any) -> list[Any]:
        """Mark the use in the hub's ledger, then relay (docs/dbus-api.md#what-counts-as-use)."""
        self._hub.ledger.mark_use(self.host_name, pane_id, current_caller())
        return await self._relay(member, signature, pane_id, *rest)

    @dbus_property(access=PropertyAccess.READ)
    def Features(self) -> T:
        """The satellite's (0 until its link was first up)."""
        return self._link.features

    @manager_method
    @replies_with_dbus_errors
    async def Spawn(self, options: dict[str, Variant]) -> tuple[int, bytes, str]:
        asked = options.get("bind_instance")
        wants_token = asked is not None and asked.signature == "b" and bool(asked.value)
        relayed = {**options, "bind_instance": Variant("b", True)}
        pane_id, token, path = await self._relay("Spawn", "a{sv}", relayed)
        self._hub.ledger.spawned(SpawnKey(self.host_name, bytes(token), pane_id), current_caller())
        return (pane_id, bytes(token) if wants_token else b"", path)

    @manager_method
    @replies_with_dbus_errors
    async def Kill(self, pane_id: int) -> None:
        await self._relay("Kill", "t", pane_id)

    @manager_method
    @replies_with_dbus_errors
    async def KillIf(self, pane_id: int, instance: bytes, conditions: list[str]) -> None:
        link = self._link
        await link.require_up()
        if not link.features & FEATURE_CONDITIONAL_KILL:
            raise NotSupported(
                f"mux on host {self.host_name} has no conditional kill; nothing was sent"
            )
        key = SpawnKey(self.host_name, bytes(instance), pane_id)
        self._hub.ledger.check_kill(key, list(conditions))
        await self._relay("KillIf", "tayas", pane_id, bytes(instance), list(conditions))

    @manager_method
    @replies_with_dbus_errors
    async def Signal(self, pane_id: int, signal_name: str) -> None:
        await self._use("Signal", "ts", pane_id, signal_name)

    @manager_method
    @replies_with_dbus_errors
    async def SendInput(self, pane_id: int, data: bytes) -> None:
        await self._use("SendInput", "tay", pane_id, bytes(data))

    @manager_method
    @replies_with_dbus_errors
    async def Resize(self, pane_id: int, rows: int, cols: int) -> None:
        await self._use("Resize", "tqq", pane_id, rows, cols)

    @manager_method
    @replies_with_dbus_errors
    async def GetScreen(self, pane_id: int) -> list[str]:
        (lines,) = await self._use("GetScreen", "t", pane_id)
        return list(lines)

    @manager_method
    @replies_with_dbus_errors
    async def GetHistory(self, pane_id: int, lines: int) -> list[str]:
        (text,) = await self._use("GetHistory", "tu", pane_id, lines)
        return list(text)

    @manager_method
    @replies_with_dbus_errors
    async def ListPanes(self) -> list[dict[str, Variant]]:
        (panes,) = await self._relay("ListPanes", "")
        return list(panes)

    @manager_method
    @replies_with_dbus_errors
    async def OpenAttach(self, pane_id: int) -> int:
        link = self._link
        await link.require_up()
        if self._hand_over_fd is None:
            raise NotSupported("this bus cannot pass file descriptors: no OpenAttach")
        self._hub.ledger.mark_use(self.host_name, pane_id, current_caller())
        sock = await open_remote_attach(link.attach_socket, pane_id, self.host_name)
        fd = sock.detach()
        self._hand_over_fd(fd)
        return fd

    @manager_method
    @replies_with_dbus_errors
    async def Snapshot(self) -> tuple[str, int]:
        path, generation = await self._relay("Snapshot", "")
        return (str(path), int(generation))
