"""`org.mux.Mux1.Manager` at `/org/mux/Mux1`: validates arguments, calls the pane table.

Each method is thin on purpose: argument checks live in `mux.protocol`, the
work in `mux.panes`, and error translation in `mux.dbus.errors`.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

from dbus_fast import PropertyAccess, Variant
from dbus_fast.annotations import DBusSignature
from dbus_fast.service import ServiceInterface, dbus_method, dbus_property, dbus_signal

from mux import __version__
from mux.dbus.caller import current_caller
from mux.dbus.errors import replies_with_dbus_errors
from mux.dbus.pane_iface import list_key, pane_property_variants
from mux.dbus.service import ManagerService
from mux.panes.pane import Pane
from mux.panes.table import PaneTable
from mux.protocol.errors import NotSupported
from mux.protocol.names import MANAGER_INTERFACE, pane_path
from mux.protocol.signals import parse_signal
from mux.protocol.spawn_options import MAX_COLS, MAX_ROWS, check_size, parse_spawn_options

if TYPE_CHECKING:
    from mux.attach.hub import AttachHub

CONDITIONAL_KILL = 0x00200000
FEATURES = CONDITIONAL_KILL


# Method signatures, spelled once.
T = Annotated[int, DBusSignature("t")]
S = Annotated[str, DBusSignature("s")]
Q = Annotated[int, DBusSignature("q")]
AY = Annotated[bytes, DBusSignature("ay")]
AS = Annotated[list[str], DBusSignature("as")]
ASV = Annotated[dict[str, Variant], DBusSignature("a{sv}")]


def pane_summary(pane: Pane) -> dict[str, Variant]:
    """One entry of `ListPanes`: the pane's properties under their snake_case keys, and
    what an integrated shell said last: `shell_state` ("prompt", "command", or "" when
    unknown), `command` (the last command line it started) and `command_status` (that
    command's exit status; -1 while it runs or when unknown)."""
    summary = {list_key(name): variant for name, variant in pane_property_variants(pane).items()}
    summary["shell_state"] = Variant("s", pane.shell_state)
    summary["command"] = Variant("s", pane.last_command or "")
    status = pane.last_command_status
    summary["command_status"] = Variant("i", status if status is not None else -1)
    return summary


class ManagerInterface(ServiceInterface):
    def __init__(
        self,
        table: PaneTable,
        *,
        service: ManagerService | None = None,
        attach: "AttachHub | None" = None,
        hand_over_fd: Callable[[int], None] | None = None,
    ) -> None:
        """`service`: snapshots, upgrades and restore problems (None: not available);
        `hand_over_fd(fd)`: `fd` is in the reply being sent; close it once sent."""
        super().__init__(MANAGER_INTERFACE)
        self.table = table
        self._service = service
        self._attach = attach
        self._hand_over_fd = hand_over_fd

    def _use(self, pane_id: int) -> Pane:
        """The dispatch every method that drives or reads a pane goes through: the use
        is marked in the pane's spawn ledger before the action (SPEC §5)."""
        pane = self.table.get(pane_id)
        self.table.mark_use(pane, current_caller())
        return pane

    # -- properties -----------------------------------------------------------

    @dbus_property(access=PropertyAccess.READ)
    def Version(self) -> S:
        return __version__

    @dbus_property(access=PropertyAccess.READ)
    def Features(self) -> T:
        return FEATURES

    # -- signals --------------------------------------------------------------

    @dbus_signal()
    def PaneExited(
        self, pane_id: int, status: int
    ) -> Annotated[tuple[int, int], DBusSignature("ti")]:
        return (pane_id, status)

    @dbus_signal()
    def SnapshotSaved(self, generation: int) -> T:
        return generation

    # -- methods --------------------------------------------------------------

    @dbus_method()
    @replies_with_dbus_errors
    def Spawn(self, options: ASV) -> Annotated[tuple[int, bytes, str], DBusSignature("tayo")]:
        request = parse_spawn_options(
            {name: (variant.signature, variant.value) for name, variant in options.items()}
        )
        pane = self.table.spawn(request, spawner=current_caller())
        instance = self.table.ids.token if request.bind_instance else b""
        return (pane.id, instance, pane_path(pane.id))

    @dbus_method()
    @replies_with_dbus_errors
    def Kill(self, pane_id: T) -> None:
        self.table.close(pane_id)

    @dbus_method()
    @replies_with_dbus_errors
    def KillIf(self, pane_id: T, instance: AY, conditions: AS) -> None:
        pane = self.table.get(pane_id)
        # Resources the kill would close: attached terminals, an application's connection.
        attached = self._attach.clients_of(pane) if self._attach is not None else 0
        if pane.endpoint is not None:
            attached += pane.endpoint.registrations
        self.table.kill_if(pane_id, bytes(instance), list(conditions), attached)

    @dbus_method()
    @replies_with_dbus_errors
    def Signal(self, pane_id: T, signal_name: S) -> None:
        signum = parse_signal(signal_name)
        self._use(pane_id).send_signal(signum)

    @dbus_method()
    @replies_with_dbus_errors
    def SendInput(self, pane_id: T, data: AY) -> None:
        self._use(pane_id).send_input(bytes(data))

    @dbus_method()
    @replies_with_dbus_errors
    def Resize(self, pane_id: T, rows: Q, cols: Q) -> None:
        size = check_size("rows", rows, MAX_ROWS), check_size("cols", cols, MAX_COLS)
        self._use(pane_id).resize(*size)

    @dbus_method()
    @replies_with_dbus_errors
    def GetScreen(self, pane_id: T) -> AS:
        return self._use(pane_id).screen_lines()

    @dbus_method()
    @replies_with_dbus_errors
    def ListPanes(self) -> Annotated[list[dict[str, Variant]], DBusSignature("aa{sv}")]:
        return [pane_summary(pane) for pane in self.table]

    @dbus_method()
    @replies_with_dbus_errors
    def ListRestoreProblems(self) -> Annotated[list[dict[str, Variant]], DBusSignature("aa{sv}")]:
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

    @dbus_method()
    @replies_with_dbus_errors
    def OpenAttach(self, pane_id: T) -> Annotated[int, DBusSignature("h")]:
        """A socket speaking the attach protocol, already attached to the pane."""
        if self._attach is None or self._hand_over_fd is None:
            self.table.get(pane_id)
            raise NotSupported("attaching is not available in this muxd")
        self._use(pane_id)
        sock = self._attach.open_attached(pane_id, user=current_caller())
        fd = sock.detach()
        self._hand_over_fd(fd)
        return fd

    @dbus_method()
    @replies_with_dbus_errors
    async def Snapshot(self) -> Annotated[tuple[str, int], DBusSignature("st")]:
        """Saves now; answers once the snapshot is durable on disk."""
        if self._service is None:
            raise NotSupported("snapshots are not available in this muxd")
        return await self._service.snapshot()

    @dbus_method()
    @replies_with_dbus_errors
    async def Upgrade(self) -> None:
        """Answers once the new program has proved it starts; the exec follows the reply."""
        if self._service is None:
            raise NotSupported("graceful upgrade is not available in this muxd")
        await self._service.upgrade()
