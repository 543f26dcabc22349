"""What a muxd restarted after a crash needs, kept in the service manager's fd store.

Under systemd (mux.service has FileDescriptorStoreMax=), muxd keeps there each
pane's terminal (`kept-pane-<id>`) and resurrection endpoint
(`kept-endpoint-<id>`), the attach socket when it bound it itself
(`kept-attach`), and a record of everything else re-adoption needs, in two
memfds written in turn (`kept-record-a|b`, mux.system.record_slots). systemd
keeps them while muxd restarts (Restart=on-failure) and hands them back in
LISTEN_FDS (mux.system.listen_fds); mux.lifecycle.readoption reads them.

A pane's terminal is kept once its program is in a scope of its own
(mux.lifecycle.pane_scopes): a program in muxd's cgroup ends with a crash.
A pane's fds leave the store when it closes or its program ends; a clean stop
empties the store. The record is rewritten as soon as the loop is free after
a pane comes or goes (a pane whose terminal is kept but not recorded would be
hung up by the next muxd), RECORD_DELAY_SECONDS after another change, and
each second while output moves.
"""

import asyncio
import logging
from collections.abc import Callable, Sequence

from mux.lifecycle.pane_scopes import in_own_scope
from mux.panes.pane import Pane
from mux.panes.windows import Window
from mux.system.listen_fds import ATTACH_SOCKET, pane_endpoint, pane_terminal, record_slot
from mux.system.notify import Supervisor
from mux.system.record_slots import SLOT_NAMES, RecordSlots

log = logging.getLogger(__name__)

RECORD_DELAY_SECONDS = 0.2
OUTPUT_CHECK_SECONDS = 1.0


class FdStore:
    def __init__(
        self,
        supervisor: Supervisor,
        loop: asyncio.AbstractEventLoop,
        record: Callable[[], bytes],
        output_mark: Callable[[], int],
    ) -> None:
        """`record`: the re-adoption record now; `output_mark`: a number that moves
        whenever a pane's output does (the record holds the screens)."""
        self._supervisor = supervisor
        self._loop = loop
        self._record = record
        self._output_mark = output_mark
        self._capacity = supervisor.fd_store_max
        self._stored: dict[str, int] = {}  # name -> how many fds under it
        self._slots: RecordSlots | None = None
        self._pending: asyncio.TimerHandle | None = None
        self._ticker: asyncio.TimerHandle | None = None
        self._pending_at_once = False
        self._last_mark = -1
        self._full_logged = False

    @property
    def active(self) -> bool:
        return self._capacity > 0

    def start(
        self,
        panes: Sequence[Pane],
        attach: tuple[int, str | None] | None,
        slots: RecordSlots | None = None,
    ) -> None:
        """Keep the record slots, the panes whose program is in its scope (a resumed
        pane: kept already under the same names, and systemd keeps one copy of an open
        file), and the attach socket when muxd bound it (`attach`: fd and the path it
        owns). `slots`: those of the muxd that crashed, holding the record this muxd
        resumed from; then everything was handed back by the store and is still in it,
        and the record is written on from the next change (none: new slots, written
        now)."""
        if not self.active:
            if slots is not None:
                slots.close()
            return
        if slots is not None:
            self._slots = slots
            self._still_kept(panes, attach)
        else:
            self._slots = RecordSlots.create()
            for slot, fd in zip(SLOT_NAMES, self._slots.fds, strict=True):
                self._supervisor.remove_fds(record_slot(slot))  # a previous muxd's
                self._keep(record_slot(slot), [fd])
            if attach is not None and attach[1] is not None:
                self._keep(ATTACH_SOCKET, [attach[0]])
            for pane in panes:
                if in_own_scope(pane.pid):
                    self._keep_pane(pane)
            self._write()
        self._ticker = self._loop.call_later(OUTPUT_CHECK_SECONDS, self._tick)

    def _still_kept(self, panes: Sequence[Pane], attach: tuple[int, str | None] | None) -> None:
        """After a crash: what the store handed back is in it still, nothing is sent
        again; a pane whose program ended meanwhile has nothing more to keep."""
        kept = [record_slot(slot) for slot in SLOT_NAMES]
        if attach is not None and attach[1] is not None:
            kept.append(ATTACH_SOCKET)
        for pane in panes:
            if pane.is_running:
                kept.append(pane_terminal(pane.id))
                if pane.endpoint is not None:
                    kept.append(pane_endpoint(pane.id))
            else:
                self._supervisor.remove_fds(pane_terminal(pane.id))
                self._supervisor.remove_fds(pane_endpoint(pane.id))
        self._stored.update(dict.fromkeys(kept, 1))

    def stop(self) -> None:
        """A clean stop: nothing is left in the store."""
        for handle in (self._pending, self._ticker):
            if handle is not None:
                handle.cancel()
        self._pending = self._ticker = None
        for name in list(self._stored):
            self._drop(name)
        if self._slots is not None:
            self._slots.close()
            self._slots = None

    # -- the table's observer -----------------------------------------------------

    def pane_added(self, pane: Pane) -> None:
        # Its terminal is kept once its program is in a scope of its own (`placed`):
        # before that a crash ends the program along with muxd's cgroup, and the
        # pane is the snapshot's to restore.
        if self.active:
            self._changed(at_once=True)

    def placed(self, pane: Pane) -> None:
        """`pane`'s program is in its own scope now: it would outlive a crash."""
        if self.active and pane.is_running:
            self._keep_pane(pane)
            self._changed(at_once=True)

    def pane_removed(self, pane: Pane) -> None:
        if self.active:
            self._drop_pane(pane.id)
            self._changed(at_once=True)

    def pane_exited(self, pane: Pane) -> None:
        # Its terminal has nothing more to keep alive.
        if self.active:
            self._drop_pane(pane.id)
            self._changed(at_once=True)

    def pane_changed(self, pane: Pane, properties: Sequence[str]) -> None:
        if self.active:
            self._changed()

    # A window's layout, title, geometry or focus is in the record too.
    def window_added(self, window: Window) -> None:
        self.window_changed(window)

    def window_changed(self, window: Window) -> None:
        if self.active:
            self._changed()

    def window_removed(self, window: Window) -> None:
        self.window_changed(window)

    # -- the store ----------------------------------------------------------------

    def _keep_pane(self, pane: Pane) -> None:
        if not pane.is_running or pane.master_fd is None:
            return
        self._keep(pane_terminal(pane.id), [pane.master_fd])
        if pane.endpoint is not None:
            self._keep(pane_endpoint(pane.id), [pane.endpoint.fileno()])

    def _drop_pane(self, pane_id: int) -> None:
        for name in (pane_terminal(pane_id), pane_endpoint(pane_id)):
            if name in self._stored:
                self._drop(name)

    def _keep(self, name: str, fds: list[int]) -> None:
        if sum(self._stored.values()) + len(fds) > self._capacity:
            if not self._full_logged:
                self._full_logged = True
                log.warning(
                    "the service manager's fd store is full (%d): %s and what follows "
                    "would not outlive a crash of muxd",
                    self._capacity,
                    name,
                )
            return
        log.debug("keeping %s in the fd store", name)
        self._supervisor.store_fds(name, fds)
        self._stored[name] = self._stored.get(name, 0) + len(fds)

    def _drop(self, name: str) -> None:
        log.debug("dropping %s from the fd store", name)
        self._supervisor.remove_fds(name)
        self._stored.pop(name, None)

    # -- the record ---------------------------------------------------------------

    def _changed(self, *, at_once: bool = False) -> None:
        """Write the record soon: on the next turn of the loop (`at_once`: changes made
        in one turn, a restore's panes say, make one write), or after a delay."""
        if self._slots is None:
            return
        if at_once and self._pending is not None and not self._pending_at_once:
            self._pending.cancel()
            self._pending = None
        if self._pending is None:
            delay = 0.0 if at_once else RECORD_DELAY_SECONDS
            self._pending = self._loop.call_later(delay, self._write)
            self._pending_at_once = at_once

    def _tick(self) -> None:
        self._ticker = self._loop.call_later(OUTPUT_CHECK_SECONDS, self._tick)
        if self._output_mark() != self._last_mark:
            self._write()

    def _write(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        if self._slots is None:
            return
        self._last_mark = self._output_mark()
        try:
            self._slots.write(self._record())
        except OSError as e:
            log.error("the re-adoption record cannot be written: %s", e.strerror)
