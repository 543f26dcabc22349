"""`org.mux.Mux1.Manager` at `/org/mux/Mux1`: validates arguments, calls the pane table.

Each method is thin on purpose: argument checks live in `mux.protocol`, the
work in `mux.panes`, and error translation in `mux.dbus.errors`. The methods'
D-Bus signatures are declared once, in `mux.protocol.dbus_methods`
(docs/dbus-api.md#manager-methods); `manager_method` gives them to dbus-fast.
"""

import asyncio
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

from dbus_fast import PropertyAccess, Variant
from dbus_fast.annotations import DBusSignature
from dbus_fast.service import dbus_property, dbus_signal

from mux import __version__
from mux.dbus.caller import CallerNotes, current_caller, current_sender
from mux.dbus.errors import replies_with_dbus_errors
from mux.dbus.method_signatures import manager_method
from mux.dbus.pane_iface import ListEntries
from mux.dbus.restore_methods import RestoreMethods
from mux.dbus.service import ManagerService
from mux.panes.history_text import history_text
from mux.panes.pane import Pane
from mux.panes.table import PaneTable
from mux.protocol.errors import NotSupported
from mux.protocol.hosts import parse_add_host
from mux.protocol.names import (
    FEATURE_CONDITIONAL_KILL,
    FEATURE_LINKS,
    MANAGER_INTERFACE,
    pane_path,
)
from mux.protocol.signals import parse_signal
from mux.protocol.spawn_options import (
    MAX_COLS,
    MAX_ROWS,
    check_size,
    pane_title,
    parse_spawn_options,
)
from mux.system.worker_threads import off_the_loop

if TYPE_CHECKING:
    from mux.attach.hub import AttachHub
    from mux.federation.hub import Hub

# Signatures of the properties and signals (the methods': MANAGER_METHODS).
T = Annotated[int, DBusSignature("t")]
S = Annotated[str, DBusSignature("s")]


class ManagerInterface(RestoreMethods):
    def __init__(
        self,
        table: PaneTable,
        *,
        service: ManagerService | None = None,
        attach: "AttachHub | None" = None,
        hand_over_fd: Callable[[int], None] | None = None,
        callers: CallerNotes | None = None,
        hub: "Hub | None" = None,
    ) -> None:
        """`service`: snapshots, upgrades and restore problems (None: not available);
        `hand_over_fd(fd)`: `fd` is in the reply being sent; close it once sent;
        `callers`: where RegisterLink notes a hub's connections (None: no links);
        `hub`: the hosts this mux drives (None: no federation)."""
        super().__init__(MANAGER_INTERFACE)
        self.table = table
        self._callers = callers
        self._hub = hub
        self._service = service
        self._attach = attach
        self._hand_over_fd = hand_over_fd
        self._list_entries = ListEntries()

    def _use(self, pane_id: int) -> Pane:
        """The dispatch every method that drives or reads a pane goes through: the use
        is marked in the pane's spawn ledger before the action
        (docs/dbus-api.md#what-counts-as-use)."""
        pane = self.table.get(pane_id)
        self.table.mark_use(pane, current_caller())
        return pane

    # -- properties -----------------------------------------------------------

    @dbus_property(access=PropertyAccess.READ)
    def Version(self) -> S:
        return __version__

    @dbus_property(access=PropertyAccess.READ)
    def Features(self) -> T:
        links = FEATURE_LINKS if self._callers is not None else 0
        return links | (FEATURE_CONDITIONAL_KILL if self.table.settings.conditional_kill else 0)

    # -- signals --------------------------------------------------------------

    @dbus_signal()
    def PaneExited(
        self, pane_id: int, status: int
    ) -> Annotated[tuple[int, int], DBusSignature("ti")]:
        return (pane_id, status)

    @dbus_signal()
    def SnapshotSaved(self, generation: int) -> T:
        return generation

    @dbus_signal()
    def HostStateChanged(
        self, name: str, state: str
    ) -> Annotated[tuple[str, str], DBusSignature("ss")]:
        return (name, state)

    # -- methods --------------------------------------------------------------

    @manager_method
    @replies_with_dbus_errors
    def Spawn(self, options: dict[str, Variant]) -> tuple[int, bytes, str]:
        request = parse_spawn_options(
            {name: (variant.signature, variant.value) for name, variant in options.items()}
        )
        pane = self.table.spawn(request, spawner=current_caller())
        instance = self.table.ids.token if request.bind_instance else b""
        return (pane.id, instance, pane_path(pane.id))

    @manager_method
    @replies_with_dbus_errors
    def Kill(self, pane_id: int) -> None:
        self.table.close(pane_id)

    @manager_method
    @replies_with_dbus_errors
    def KillIf(self, pane_id: int, instance: bytes, conditions: list[str]) -> None:
        if not self.table.settings.conditional_kill:
            raise NotSupported(
                "conditional kill is turned off in this mux's configuration "
                "(conditional_kill = false); nothing was killed"
            )
        pane = self.table.get(pane_id)
        # Resources the kill would close: attached terminals, an application's connection.
        attached = self._attach.clients_of(pane) if self._attach is not None else 0
        if pane.endpoint is not None:
            attached += pane.endpoint.registrations
        self.table.kill_if(pane_id, bytes(instance), list(conditions), attached)

    @manager_method
    @replies_with_dbus_errors
    def Signal(self, pane_id: int, signal_name: str) -> None:
        signum = parse_signal(signal_name)
        self._use(pane_id).send_signal(signum)

    @manager_method
    @replies_with_dbus_errors
    def SendInput(self, pane_id: int, data: bytes) -> None:
        self._use(pane_id).send_input(bytes(data))

    @manager_method
    @replies_with_dbus_errors
    def Resize(self, pane_id: int, rows: int, cols: int) -> None:
        size = check_size("rows", rows, MAX_ROWS), check_size("cols", cols, MAX_COLS)
        self._use(pane_id).resize(*size)

    @manager_method
    @replies_with_dbus_errors
    def SetTitle(self, pane_id: int, title: str) -> None:
        """The pane's title, kept over the program's own; "": the program's again."""
        self._use(pane_id).set_title(pane_title(title))

    @manager_method
    @replies_with_dbus_errors
    def GetScreen(self, pane_id: int) -> list[str]:
        return self._use(pane_id).screen_lines()

    @manager_method
    @replies_with_dbus_errors
    async def GetHistory(self, pane_id: int, lines: int) -> list[str]:
        """The lines scrolled off the screen (the last `lines`; 0: all), then the screen."""
        made = history_text(self._use(pane_id), lines)
        return await off_the_loop(asyncio.get_running_loop(), made)

    @manager_method
    @replies_with_dbus_errors
    def ListPanes(self) -> list[dict[str, Variant]]:
        return [self._list_entries.entry(pane) for pane in self.table]

    @manager_method
    @replies_with_dbus_errors
    def ListRestoreProblems(self) -> list[dict[str, Variant]]:
        """The panes of the last session that could not be started again, and why.
        They stay in the snapshot (under the id given here) until repaired."""
        problems = self._service.unrestored_panes() if self._service is not None else []
        return [
            {
                "id": Variant("t", problem.pane_id),
                "argv": Variant("as", list(problem.argv)),
                "cwd": Variant("s", problem.cwd),
                "title": Variant("s", problem.title),
                "reason": Variant("s", problem.reason),
            }
            for problem in problems
        ]

    @manager_method
    @replies_with_dbus_errors
    def OpenAttach(self, pane_id: int) -> int:
        """A socket speaking the attach protocol, already attached to the pane."""
        if self._attach is None or self._hand_over_fd is None:
            self.table.get(pane_id)
            raise NotSupported("attaching is not available in this muxd")
        self._use(pane_id)
        sock = self._attach.open_attached(pane_id, user=current_caller())
        fd = sock.detach()
        self._hand_over_fd(fd)
        return fd

    @manager_method
    @replies_with_dbus_errors
    def ListClients(self, pane_id: int) -> list[dict[str, Variant]]:
        """Who is attached to the pane: pid (0: a socket OpenAttach made), uid (only the
        user's own processes are let in), read-only, the size of its terminal (0: never
        said)."""
        pane = self.table.get(pane_id)
        clients = self._attach.clients(pane) if self._attach is not None else []
        return [
            {
                "pid": Variant("u", client.pid or 0),
                "uid": Variant("u", os.getuid()),
                "read_only": Variant("b", client.read_only),
                "glance": Variant("b", client.glance),
                "rows": Variant("q", (client.size or (0, 0))[0]),
                "cols": Variant("q", (client.size or (0, 0))[1]),
            }
            for client in clients
        ]

    @manager_method
    @replies_with_dbus_errors
    async def Snapshot(self) -> tuple[str, int]:
        """Saves now; answers once the snapshot is durable on disk."""
        if self._service is None:
            raise NotSupported("snapshots are not available in this muxd")
        return await self._service.snapshot()

    @manager_method
    @replies_with_dbus_errors
    def RegisterLink(self, hub_id: bytes) -> None:
        """The calling connection speaks for that hub from now on (docs/federation.md#links)."""
        sender = current_sender()
        if self._callers is None or sender is None:
            raise NotSupported("this muxd does not take links from a hub")
        self._callers.register_link(sender, bytes(hub_id))

    # -- federation: the hub's hosts (docs/federation.md#hosts) -------------------

    def _the_hub(self) -> "Hub":
        if self._hub is None:
            raise NotSupported("this muxd drives no other hosts")
        return self._hub

    @manager_method
    @replies_with_dbus_errors
    def AddHost(self, name: str, options: dict[str, Variant]) -> None:
        parsed = parse_add_host({key: (v.signature, v.value) for key, v in options.items()})
        self._the_hub().add(name, parsed.destination)

    @manager_method
    @replies_with_dbus_errors
    async def RemoveHost(self, name: str) -> None:
        await self._the_hub().remove(name)

    @manager_method
    @replies_with_dbus_errors
    def ListHosts(self) -> list[dict[str, Variant]]:
        return [
            {
                "name": Variant("s", entry.name),
                "destination": Variant("s", entry.destination),
                "state": Variant("s", str(entry.state)),
                "features": Variant("t", entry.features),
                "last_error": Variant("s", entry.last_error),
            }
            for entry in self._the_hub().entries()
        ]

    @manager_method
    @replies_with_dbus_errors
    async def Upgrade(self) -> None:
        """Answers once the new program has proved it starts; the exec follows the reply."""
        if self._service is None:
            raise NotSupported("graceful upgrade is not available in this muxd")
        await self._service.upgrade()
