"""The pane table: id allocation, instance token, windows, spawn and close.

This is the core the D-Bus layer (and later the attach socket) drives; it
knows nothing of D-Bus. Observers hear about panes appearing, changing,
exiting and being removed.
"""

import asyncio
import contextlib
import functools
import logging
import os
import pwd
import secrets
import signal
import socket
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from mux.config import Settings
from mux.panes.environment import pane_environment
from mux.panes.exits import ExitCallback, ExitWatcher, Reapable
from mux.panes.handover import PaneRecord, TableRecord
from mux.panes.launch_endpoint import EndpointFactory, LaunchEndpoint
from mux.panes.ledger import CONDITIONS, UNATTACHED_SINCE_SPAWN, SpawnRecord
from mux.panes.pane import Launch, Pane, PaneObserver
from mux.panes.process import (
    ChildProcess,
    StartedProcess,
    check_directory,
    resolve_program,
    start_on_pty,
)
from mux.panes.screen_sweeper import ScreenSweeper
from mux.panes.shell_integration import prepare_shell, remove_directory
from mux.protocol.environment import ENDPOINT_VARIABLE
from mux.protocol.errors import InvalidArgument, NoSuchPane, PreconditionFailed
from mux.protocol.spawn_options import LaunchKind, SpawnRequest
from mux.system.proctree import ProcessTree
from mux.system.sessions import kill_session, sessions_members

log = logging.getLogger(__name__)

INSTANCE_TOKEN_BYTES = 16


class TableObserver(PaneObserver, Protocol):
    def pane_added(self, pane: Pane) -> None: ...
    def pane_removed(self, pane: Pane) -> None: ...


class IdSpace:
    """Pane and window ids, named by a random instance token (SPEC §5).

    The token and the counters are created together and only replaced
    together: ids from one space never get confused with another's.
    """

    def __init__(self) -> None:
        self.token = secrets.token_bytes(INSTANCE_TOKEN_BYTES)
        self._next_pane = 1
        self._next_window = 1

    @classmethod
    def restored(cls, token: bytes, next_pane: int, next_window: int) -> "IdSpace":
        """The same id space, carried across a graceful upgrade (SPEC §5)."""
        ids = cls()
        ids.token, ids._next_pane, ids._next_window = token, next_pane, next_window
        return ids

    @property
    def next_pane_id(self) -> int:
        """The id the next pane will get (a failed spawn does not use one up)."""
        return self._next_pane

    def new_pane_id(self) -> int:
        pane_id = self._next_pane
        self._next_pane += 1
        return pane_id

    @property
    def next_window_id(self) -> int:
        return self._next_window

    def new_window_id(self) -> int:
        window_id = self._next_window
        self._next_window += 1
        return window_id


def login_shell() -> str:
    try:
        shell = pwd.getpwuid(os.getuid()).pw_shell
    except KeyError:
        shell = ""
    return shell or os.environ.get("SHELL") or "/bin/sh"


def _log_reaped(pid: int, status: int) -> None:
    log.info("a closed pane's program (pid %d) ended (%d)", pid, status)


class PaneTable:
    def __init__(
        self,
        settings: Settings,
        service_env: Mapping[str, str],
        loop: asyncio.AbstractEventLoop,
        *,
        shell_dirs: Path | None = None,
        resurrection: EndpointFactory | None = None,
    ) -> None:
        """`shell_dirs`: where shell launches get their integration directories
        (<runtime>/shell); None: shells start without integration. `resurrection`:
        what opens launches' endpoints; None: no endpoints at all."""
        self.settings = settings
        self.shell_dirs = shell_dirs
        self.resurrection = resurrection
        self.ids = IdSpace()
        self._service_env = dict(service_env)
        self._loop = loop
        self._panes: dict[int, Pane] = {}
        self._use_count = 0
        self._deferred_watches: list[tuple[Reapable, ExitCallback]] = []
        # Closed panes within their grace period: their sessions are ended
        # (SIGKILL) when it is over, or at once when the service stops.
        self._closing: dict[int, Pane] = {}
        self._windows: dict[int, set[int]] = {}
        self.exits = ExitWatcher(loop)
        self._observers: list[TableObserver] = []
        self._sweeper = ScreenSweeper(
            loop, settings.screen_idle_seconds, lambda: list(self._panes.values())
        )
        # The names a shell's OSC 7 may give this machine.
        self.local_hosts = frozenset({socket.gethostname().lower()})
        self._cwd_timer = loop.call_later(settings.cwd_sample_seconds, self._sample_cwds_tick)

    # -- observers ------------------------------------------------------------

    def add_observer(self, observer: TableObserver) -> None:
        self._observers.append(observer)

    def replace_observer(self, kind: type, observer: TableObserver) -> None:
        """Swap the observer of this kind (a new bus connection's publisher, say)."""
        self._observers = [o for o in self._observers if not isinstance(o, kind)]
        self._observers.append(observer)

    def pane_changed(self, pane: Pane, properties: Sequence[str]) -> None:
        for observer in self._observers:
            observer.pane_changed(pane, properties)

    def pane_exited(self, pane: Pane) -> None:
        if self._panes.get(pane.id) is not pane:
            log.info("closed pane %d: pid %d ended (%d)", pane.id, pane.pid, pane.exit_status)
            return
        log.info("pane %d (pid %d) exited with status %d", pane.id, pane.pid, pane.exit_status)
        for observer in self._observers:
            observer.pane_exited(pane)
        self._linger(pane)

    def _linger(self, pane: Pane) -> None:
        linger = self.settings.exited_pane_linger_seconds
        if linger is not None:
            self._loop.call_later(linger, self._close_if_exited, pane)

    def _close_if_exited(self, pane: Pane) -> None:
        if self._panes.get(pane.id) is pane:
            self.close(pane.id)

    # -- queries --------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._panes)

    def __iter__(self) -> Iterator[Pane]:
        return iter(list(self._panes.values()))

    def get(self, pane_id: int) -> Pane:
        pane = self._panes.get(pane_id)
        if pane is None:
            raise NoSuchPane(pane_id)
        return pane

    def mark_used(self, pane: Pane) -> None:
        """A client started, attached to or typed into `pane` (for "the last used")."""
        self._use_count += 1
        pane.use_order = self._use_count

    @staticmethod
    def mark_use(pane: Pane, user: str | None) -> None:
        """Someone is about to drive, read or subscribe to `pane` (the spawn ledger)."""
        if pane.spawn_record is not None:
            pane.spawn_record.mark_use(user)

    def kill_if(
        self, pane_id: int, instance: bytes, conditions: Sequence[str], attached_clients: int
    ) -> None:
        """Close the pane if `instance` is this id space's token and the conditions hold;
        otherwise PreconditionFailed naming what failed, and nothing is killed. Check
        and kill happen in one synchronous step: nothing runs in between."""
        pane = self.get(pane_id)
        for condition in conditions:
            if condition not in CONDITIONS:
                raise PreconditionFailed(
                    f"unknown condition {condition!r} (this mux knows: {', '.join(CONDITIONS)}); "
                    "nothing was killed"
                )
        if instance and instance != self.ids.token:
            raise PreconditionFailed(
                "instance: the token names another instance of mux (it has been restarted "
                f"since, and pane ids started again); pane {pane_id} was not killed"
            )
        if UNATTACHED_SINCE_SPAWN in conditions:
            self._check_unattached(pane, instance, attached_clients)
        self.close(pane_id)

    @staticmethod
    def _check_unattached(pane: Pane, instance: bytes, attached_clients: int) -> None:
        def refuse(why: str) -> PreconditionFailed:
            return PreconditionFailed(f"{UNATTACHED_SINCE_SPAWN}: {why}; it was not killed")

        if not instance:
            raise refuse(f"needs the instance token (from a bound Spawn) to name pane {pane.id}")
        record = pane.spawn_record
        if record is None:
            raise refuse(f"pane {pane.id} did not come from Spawn in this instance of mux")
        if record.used_by_others:
            raise refuse(f"pane {pane.id} has been attached to or used by another client")
        if attached_clients:
            raise refuse(
                f"pane {pane.id} has {attached_clients} open connection(s): attached "
                "terminals, or an application's resurrection client"
            )

    def most_recently_used(self, excluding: Pane | None = None) -> Pane:
        """The running pane a client used last (spawn, attach, typing)."""
        running = [p for p in self._panes.values() if p.is_running and p is not excluding]
        if not running:
            raise NoSuchPane(0, "there is no running pane")
        return max(running, key=lambda p: (p.use_order, p.id))

    # -- spawn ----------------------------------------------------------------

    def _home(self) -> str:
        return self._service_env.get("HOME") or os.path.expanduser("~")

    def spawn(
        self,
        request: SpawnRequest,
        notice: str | None = None,
        spawner: str | None = None,
        offer: str | None = None,
    ) -> Pane:
        """Start a pane; `notice` is shown on its screen before anything the program prints.
        `spawner`: the bus connection that called Spawn (None: not from Spawn); `offer`:
        the reference the launch's application gets back (a restore)."""
        if request.window and request.window not in self._windows:
            raise InvalidArgument(
                f"there is no window {request.window}; omit 'window' (or pass 0) for a new one"
            )
        cwd = request.cwd or self._home()
        check_directory(cwd)
        pane_id_preview = self.ids.next_pane_id  # the env names the pane before it exists
        env = pane_environment(
            self._service_env, request.env, term=self.settings.term, pane_id=pane_id_preview
        )
        if request.kind is LaunchKind.EXPLICIT:
            wanted = request.program or request.argv[0]
            program = resolve_program(wanted, cwd=cwd, path=env.get("PATH"))
            argv = request.argv
            exec_argv: tuple[str, ...] = argv
        shell_launch = None
        if request.kind is not LaunchKind.EXPLICIT:
            shell = request.shell or self.settings.default_shell or login_shell()
            program = resolve_program(shell, cwd=cwd, path=env.get("PATH"))
            argv = (program,)
            shell_launch = prepare_shell(program, self.shell_dirs, env)
            exec_argv = shell_launch.exec_argv
            env.update(shell_launch.env)
        rows = request.rows or self.settings.default_rows
        cols = request.cols or self.settings.default_cols
        invocation = request.invocation or secrets.token_hex(16)
        endpoint = self._open_endpoint(request, invocation, offer)
        if endpoint is not None:
            env[ENDPOINT_VARIABLE] = str(endpoint.path)

        def undo() -> None:
            if shell_launch is not None:
                remove_directory(shell_launch.directory)
            if endpoint is not None:
                endpoint.close()

        try:
            started = start_on_pty(program, exec_argv, env=env, cwd=cwd, rows=rows, cols=cols)
        except BaseException:
            undo()
            raise
        try:
            pane = self._adopt(
                started,
                request,
                argv=argv,
                program=program,
                cwd=cwd,
                rows=rows,
                cols=cols,
                invocation=invocation,
            )
            if shell_launch is not None:
                pane.shell_token = shell_launch.token
                pane.shell_dir = shell_launch.directory
            if spawner is not None:
                pane.spawn_record = SpawnRecord(spawner)
            if endpoint is not None:
                pane.endpoint = endpoint
                endpoint.bind(pane)
        except BaseException:
            undo()
            # Nothing was published: the program must not outlive the failure.
            with contextlib.suppress(OSError):
                os.killpg(started.process.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(started.process.pid, 0)
            with contextlib.suppress(OSError):
                os.close(started.master_fd)
            raise
        assert pane.id == pane_id_preview
        if notice:
            pane.show_notice(notice)
        self._panes[pane.id] = pane
        self._windows.setdefault(pane.window, set()).add(pane.id)
        self.mark_used(pane)
        log.info(
            "pane %d: started %s (pid %d) in window %d", pane.id, argv[0], pane.pid, pane.window
        )
        for observer in self._observers:
            observer.pane_added(pane)
        return pane

    def _adopt(
        self,
        started: StartedProcess,
        request: SpawnRequest,
        *,
        argv: tuple[str, ...],
        program: str,
        cwd: str,
        rows: int,
        cols: int,
        invocation: str,
    ) -> Pane:
        """The Pane for a started process, watched for its exit; not yet published."""
        pane_id = self.ids.new_pane_id()
        window = request.window or self.ids.new_window_id()
        pane = Pane(
            pane_id=pane_id,
            window=window,
            launch=Launch(
                kind=request.kind,
                argv=argv,
                program=program,
                env_overrides=tuple(sorted(request.env.items())),
                invocation=invocation,
            ),
            process=started.process,
            master_fd=started.master_fd,
            cwd=cwd,
            title=request.title if request.title is not None else os.path.basename(argv[0]),
            title_explicit=request.title is not None,
            rows=rows,
            cols=cols,
            scrollback_bytes=self.settings.scrollback_bytes,
            max_input_backlog=self.settings.max_input_backlog_bytes,
            loop=self._loop,
            observer=self,
            local_hosts=self.local_hosts,
        )
        try:
            self.exits.watch(started.process, pane.process_exited)
        except BaseException:
            self._loop.remove_reader(started.master_fd)  # the caller closes it
            raise
        return pane

    def _resume_endpoint(self, pane: Pane, record: PaneRecord) -> None:
        """The endpoint the previous muxd handed over (its socket inherited)."""
        pane.checkpoint_generation = record.checkpoint_generation
        saved = record.endpoint
        if saved is None:
            return
        if self.resurrection is None or not pane.is_running:
            with contextlib.suppress(OSError):
                os.close(saved.fd)
            remove_directory(Path(saved.directory))
            return
        pane.endpoint = self.resurrection.resumed(
            saved.fd,
            Path(saved.directory),
            invocation=pane.launch.invocation,
            offer=saved.offer,
            shell_launch=saved.shell_launch,
        )
        pane.endpoint.bind(pane)

    def _open_endpoint(
        self, request: SpawnRequest, invocation: str, offer: str | None
    ) -> LaunchEndpoint | None:
        """The launch's application-resurrection endpoint, when it is to have one."""
        wanted = (
            self.settings.resurrection if request.resurrection is None else request.resurrection
        )
        if not wanted or not self.settings.resurrection or self.resurrection is None:
            return None  # (the adapter disabled in configuration wins over the option)
        try:
            return self.resurrection.open(
                invocation=invocation,
                offer=offer,
                shell_launch=request.kind is not LaunchKind.EXPLICIT,
            )
        except OSError as e:
            log.error("no application-resurrection endpoint for this launch: %s", e.strerror)
            return None

    # -- close ----------------------------------------------------------------

    def close(self, pane_id: int) -> None:
        """Close a pane unconditionally: hang up its terminal, forget it.

        Whatever is left of its session `kill_grace_seconds` later (a program
        or job that ignores SIGHUP) is killed; the program is reaped whenever
        it exits, so no zombie is left behind.
        """
        pane = self.get(pane_id)
        del self._panes[pane_id]
        members = self._windows.get(pane.window)
        if members is not None:
            members.discard(pane_id)
            if not members:
                del self._windows[pane.window]
        pane.hang_up()
        self._closing[pane_id] = pane
        self._loop.call_later(self.settings.kill_grace_seconds, self._end_session, pane)
        for observer in self._observers:
            observer.pane_removed(pane)

    def _end_session(self, pane: Pane) -> None:
        if self._closing.pop(pane.id, None) is None:
            return  # ended already, at stop
        killed = kill_session(pane.pid)
        if killed:
            log.info("closed pane %d: killed %d process(es) ignoring the hangup", pane.id, killed)

    def sample_cwds(self) -> None:
        """A process capture of every running pane's working directory (Linux: /proc)."""
        if not any(pane.is_running for pane in self._panes.values()):
            return
        processes = ProcessTree.read()
        if processes is None:
            return
        for pane in list(self._panes.values()):
            pane.sample_cwd(processes)

    def _sample_cwds_tick(self) -> None:
        try:
            self.sample_cwds()
        finally:
            self._cwd_timer = self._loop.call_later(
                self.settings.cwd_sample_seconds, self._sample_cwds_tick
            )

    def close_all(self) -> None:
        self._sweeper.stop()
        self._cwd_timer.cancel()
        for pane in list(self._panes.values()):
            self.close(pane.id)

    # -- graceful upgrade -----------------------------------------------------

    def handover_record(self) -> TableRecord:
        """The table for the next muxd. The caller ends the sessions of closed panes
        first (an upgrade cuts their grace short); their programs still need reaping."""
        closing = list(self._closing.values())
        return TableRecord(
            token=self.ids.token.hex(),
            next_pane=self.ids.next_pane_id,
            next_window=self.ids.next_window_id,
            panes=[pane.handover_record() for pane in self._panes.values()],
            reap=[pane.pid for pane in closing if pane.process.returncode is None],
        )

    @classmethod
    def resume(
        cls,
        record: TableRecord,
        settings: Settings,
        service_env: Mapping[str, str],
        loop: asyncio.AbstractEventLoop,
        *,
        shell_dirs: Path | None = None,
        resurrection: EndpointFactory | None = None,
    ) -> "PaneTable":
        table = cls(settings, service_env, loop, shell_dirs=shell_dirs, resurrection=resurrection)
        table.ids = IdSpace.restored(
            bytes.fromhex(record.token), record.next_pane, record.next_window
        )
        for pane_record in record.panes:
            process = ChildProcess(pane_record.pid)
            if not pane_record.running:
                process.returncode = pane_record.exit_status  # reaped by the old muxd
            pane = Pane.resume(
                pane_record,
                process,
                scrollback_bytes=settings.scrollback_bytes,
                max_input_backlog=settings.max_input_backlog_bytes,
                loop=loop,
                observer=table,
                local_hosts=table.local_hosts,
            )
            table._resume_endpoint(pane, pane_record)
            table._panes[pane.id] = pane
            table._windows.setdefault(pane.window, set()).add(pane.id)
            if pane.is_running:
                table._deferred_watches.append((process, pane.process_exited))
            else:
                table._linger(pane)
        for pid in record.reap:
            table._deferred_watches.append((ChildProcess(pid), functools.partial(_log_reaped, pid)))
        return table

    async def quiesce_checkpoints(self) -> None:
        """Before the final snapshot: every application's checkpoint that was acknowledged
        is on disk and in its pane, and no new one is taken."""
        endpoints = [pane.endpoint for pane in self._panes.values() if pane.endpoint is not None]
        await asyncio.gather(*(endpoint.quiesce() for endpoint in endpoints))

    def prepare_final_snapshot(self) -> None:
        """Participant of the final snapshot: from now on no output is read and no
        exit changes a pane, so the capture is of one moment. (Shell metadata and
        checkpoint writers join here when they exist.)"""
        for pane in self._panes.values():
            pane.freeze()

    def start_watching_exits(self) -> None:
        """After a resume, once every observer is in place: an exit in the gap is
        then reported like any other (PaneExited, PropertiesChanged)."""
        for process, callback in self._deferred_watches:
            self.exits.watch(process, callback)
        self._deferred_watches.clear()

    def end_closing_sessions(self) -> None:
        """At stop: end the sessions of closed panes without waiting out their grace."""
        for pane in list(self._closing.values()):
            self._end_session(pane)

    def lingering_processes(self) -> int:
        """Processes of panes (open or closing) that have not ended yet."""
        panes = [*self._panes.values(), *self._closing.values()]
        members = sessions_members([pane.pid for pane in panes])
        return sum(max(len(members[pane.pid]), pane.process.returncode is None) for pane in panes)
