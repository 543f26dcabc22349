"""Each pane's program in a transient scope of the user's service manager.

Under systemd, a pane's program is moved, right after it starts, into a scope
unit of its own (`mux-pane-<id>-<instance>.scope`) through
org.freedesktop.systemd1.Manager.StartTransientUnit, as desktop terminals do:
outside mux.service's cgroup, so that a crash of muxd (whose cgroup systemd
then kills) does not take the panes along, and `systemd-cgls` shows each pane
with its own memory and CPU. Where the service manager does not answer (mux's
private bus, no systemd), the programs stay in muxd's cgroup, as before; that
is logged once.

The scope is made after the program started (a scope needs a process): what
the program forks in the first milliseconds stays in mux.service's cgroup.
At a clean stop, after the panes are hung up, every scope of this instance
still there is stopped, which ends whatever a pane left behind; at start-up,
the scopes of an earlier instance that nothing re-adopted are stopped too.
"""

import asyncio
import logging
from collections.abc import Callable, Sequence

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from mux.panes.pane import Pane
from mux.system import proctree
from mux.system.tasks import BackgroundTasks

log = logging.getLogger(__name__)

SYSTEMD = "org.freedesktop.systemd1"
SYSTEMD_PATH = "/org/freedesktop/systemd1"
SYSTEMD_MANAGER = "org.freedesktop.systemd1.Manager"
# Errors that mean no service manager is there to ask: not worth asking again.
ABSENT = frozenset(
    {
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.UnknownMethod",
    }
)
STOP_SECONDS = 10.0
# How long after StartTransientUnit's answer the program is looked for in its scope.
SETTLE_SECONDS = 0.02
CONFIRM_TRIES = 250


def in_own_scope(pid: int) -> bool:
    """Whether the process runs in a pane scope (its own, or its pane's)."""
    cgroup = proctree.unified_cgroup(pid)
    return cgroup is not None and "/mux-pane-" in cgroup


def scope_name(pane_id: int, token_hex: str) -> str:
    """The pane's scope: the instance token's start keeps an earlier instance's
    lingering scope of the same pane id from clashing."""
    return f"mux-pane-{pane_id}-{token_hex[:8]}.scope"


class PaneScopes:
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        bus: Callable[[], MessageBus | None],
        token_hex: Callable[[], str],
        placed: Callable[[Pane], None],
    ) -> None:
        """`bus`: the connection on which the user's service manager is (None: none now);
        `token_hex`: the instance token, part of each scope's name; `placed(pane)`: the
        pane's program is in its scope now."""
        self._loop = loop
        self._bus = bus
        self._token = token_hex
        self._placed = placed
        self._absent = False
        self._tasks = BackgroundTasks()

    # -- the table's observer -----------------------------------------------------

    def pane_added(self, pane: Pane) -> None:
        if self._absent or not pane.is_running:
            return
        log.debug("pane %d: placing", pane.id)
        self._tasks.spawn(self._place(pane))

    def pane_removed(self, pane: Pane) -> None:
        pass

    def pane_changed(self, pane: Pane, properties: Sequence[str]) -> None:
        pass

    def pane_exited(self, pane: Pane) -> None:
        pass

    async def place_missing(self, panes: Sequence[Pane]) -> None:
        """Once on the bus: the panes that started before (a restore at start-up) and
        are in no scope of theirs yet (a resumed or re-adopted pane is)."""
        for pane in panes:
            if pane.is_running and not in_own_scope(pane.pid):
                await self._place(pane)

    # -- the calls ----------------------------------------------------------------

    async def _place(self, pane: Pane) -> None:
        pane_id, pid, program = pane.id, pane.pid, pane.argv[0]
        bus = self._bus()
        if bus is None:  # mux's private bus, or an outage: the pane stays where it is
            log.debug("pane %d stays in mux's cgroup: no service manager to ask", pane_id)
            return
        properties = [
            ("PIDs", Variant("au", [pid])),
            ("Description", Variant("s", f"mux pane {pane_id}: {program}")),
            # Gone once its processes are, whether they ended well or not.
            ("CollectMode", Variant("s", "inactive-or-failed")),
        ]
        reply = await self._call(
            bus,
            "StartTransientUnit",
            "ssa(sv)a(sa(sv))",
            [scope_name(pane_id, self._token()), "fail", properties, []],
        )
        if reply is None:
            return
        if reply.message_type is not MessageType.ERROR:
            self._confirm(pane, CONFIRM_TRIES)
            return
        if reply.error_name in ABSENT:
            self._log_absent("the user's service manager does not answer")
        else:
            log.warning("pane %d stays in mux's cgroup: no scope (%s)", pane_id, _error_text(reply))

    def _confirm(self, pane: Pane, tries: int) -> None:
        """The answer means the job is queued: the program is in its scope once the
        job ran, which is looked for a few times."""
        if not pane.is_running:
            return
        if in_own_scope(pane.pid):
            self._placed(pane)
        elif tries > 1:
            self._loop.call_later(SETTLE_SECONDS, self._confirm, pane, tries - 1)
        else:
            log.warning("pane %d: its program did not arrive in its scope", pane.id)

    async def stop_all(self) -> None:
        """Stop every scope of this instance that is still there (a clean stop)."""
        self._tasks.cancel_all()
        stopped = await self._stop(lambda name: True, f"mux-pane-*-{self._token()[:8]}.scope")
        if stopped:
            log.info("stopped %d pane scopes left behind", stopped)

    async def stop_strays(self) -> None:
        """Once on the bus: stop the scopes of an earlier instance whose panes this one
        did not take over (its record was lost, or muxd ran without the fd store).
        Their terminals are gone and the snapshot restored their panes: what still
        runs there would run twice, out of any pane's reach."""
        ours = f"-{self._token()[:8]}.scope"
        stopped = await self._stop(lambda name: not name.endswith(ours), "mux-pane-*.scope")
        if stopped:
            log.warning(
                "stopped %d pane scopes of an earlier muxd that no pane came back to", stopped
            )

    async def _stop(self, chosen: Callable[[str], bool], pattern: str) -> int:
        bus = self._bus()
        if bus is None or self._absent:
            return 0
        listed = await self._call(bus, "ListUnitsByPatterns", "asas", [[], [pattern]])
        if listed is None or listed.message_type is MessageType.ERROR:
            return 0
        names = [str(unit[0]) for unit in listed.body[0] if chosen(str(unit[0]))]
        await asyncio.gather(
            *(self._call(bus, "StopUnit", "ss", [name, "replace"]) for name in names)
        )
        return len(names)

    async def _call(
        self, bus: MessageBus, member: str, signature: str, body: list[object]
    ) -> Message | None:
        message = Message(
            destination=SYSTEMD,
            path=SYSTEMD_PATH,
            interface=SYSTEMD_MANAGER,
            member=member,
            signature=signature,
            body=body,
        )
        try:
            return await asyncio.wait_for(bus.call(message), STOP_SECONDS)
        except (TimeoutError, OSError, EOFError) as e:
            log.warning("the user's service manager did not answer %s: %s", member, e)
            return None

    def _log_absent(self, why: str) -> None:
        if not self._absent:
            log.info("panes run in mux's own cgroup: %s", why)
        self._absent = True


def _error_text(reply: Message) -> str:
    detail = reply.body[0] if reply.body and isinstance(reply.body[0], str) else ""
    return f"{reply.error_name}: {detail}" if detail else str(reply.error_name)
