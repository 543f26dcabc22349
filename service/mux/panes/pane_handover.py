"""A pane across a graceful upgrade's execve: its handover record, and the pane again.

The record's shape is mux.panes.handover.PaneRecord (its version is the
handover's, in mux.lifecycle.upgrade); the launch's fields go through
`Launch` (mux.panes.launch), like the snapshot's.
"""

import contextlib
import os
from pathlib import Path

from mux.config import Settings
from mux.panes.cwd import CwdObservation
from mux.panes.exits import Reapable
from mux.panes.handover import EndpointRecord, PaneRecord
from mux.panes.launch import Launch
from mux.panes.launch_endpoint import EndpointFactory, LaunchEndpoint
from mux.panes.ledger import SpawnRecord
from mux.panes.pane import Pane, PaneObserver, PaneState
from mux.panes.pane_view import PaneView
from mux.panes.process import ChildProcess, ForeignProcess, NoProcess
from mux.panes.pty_channel import PtyChannel
from mux.panes.replay import CommandReplay
from mux.panes.shell_integration import remove_directory
from mux.panes.shell_tracker import ShellTracker
from mux.protocol.modes import ModeTracker
from mux.protocol.names import EXIT_STATUS_UNKNOWN
from mux.system import proctree
from mux.system.shared_reader import SharedReader
from mux.terminal.screen import Screen
from mux.terminal.scrollback import Scrollback


def pane_record(pane: Pane, history_bytes: int | None = None) -> PaneRecord:
    """Everything `pane` is, for the muxd that follows an exec; `history_bytes`: keep
    only that much of the end of its history (the crash record, rewritten often)."""
    view, shell, record = pane.view, pane.shell, pane.spawn_record
    dump, decoder_pending = view.dump_screen()
    replay = shell.replay
    return PaneRecord(
        id=pane.id,
        window=pane.window,
        pid=pane.pid,
        start_ticks=proctree.start_ticks(pane.pid) if pane.is_running else None,
        **pane.launch.handover_fields(),
        cwd=shell.cwd,
        cwd_source=shell.cwd_source,
        cwd_captured_at=shell.cwd_captured_at,
        shell_token=shell.shell_token,
        shell_dir=str(pane.shell_dir) if pane.shell_dir is not None else None,
        endpoint=_endpoint_record(pane.endpoint),
        checkpoint_generation=pane.checkpoint_generation,
        modes=sorted(view.modes.enabled),
        replay=(
            (replay.command, replay.checkpoint_generation, replay.phase)
            if replay is not None
            else None
        ),
        spawned_by=record.spawner if record else None,
        used_by_others=record.used_by_others if record else False,
        title=shell.title,
        title_explicit=shell.title_explicit,
        # A held pane (mux.panes.held) counts as running, with pid 0: after an upgrade
        # or a crash it is restored from the snapshot, held again (table_resume).
        running=pane.is_live,
        exit_status=pane.exit_status,
        rows=pane.rows,
        cols=pane.cols,
        master_fd=pane.terminal.fd,
        scrollback=_tail(view.scrollback.contents(), history_bytes),
        scrollback_total=view.scrollback.total,
        screen_dump=dump,
        decoder_pending=decoder_pending,
        input_backlog=pane.terminal.input_backlog,
    )


def _tail(history: bytes, limit: int | None) -> bytes:
    return history if limit is None or len(history) <= limit else history[-limit:]


def _endpoint_record(endpoint: LaunchEndpoint | None) -> EndpointRecord | None:
    if endpoint is None or endpoint.stopped:
        return None
    return EndpointRecord(
        fd=endpoint.fileno(),
        directory=str(endpoint.directory),
        offer=endpoint.offer,
        shell_launch=endpoint.shell_launch,
    )


def resumed_pane(
    record: PaneRecord,
    *,
    settings: Settings,
    shared_reader: SharedReader,
    observer: PaneObserver,
    local_hosts: frozenset[str] = frozenset(),
    resurrection: EndpointFactory | None = None,
    after_crash: bool = False,
) -> Pane:
    """The pane a previous muxd handed over, on the terminal fd it left open, with its
    endpoint; not started (its table starts it once it is in place). `after_crash`:
    from the record of a muxd that crashed (`readopted`)."""
    process: Reapable
    if record.pid == 0:
        process = NoProcess()  # a place holder (mux.panes.placeholder)
    elif after_crash:
        record, process = readopted(record)
    else:
        process = ChildProcess(record.pid)
        if not record.running:
            process.returncode = record.exit_status  # reaped by the old muxd
    return _pane(
        record,
        process,
        settings=settings,
        shared_reader=shared_reader,
        observer=observer,
        local_hosts=local_hosts,
        resurrection=resurrection,
    )


def readopted(record: PaneRecord) -> tuple[PaneRecord, Reapable]:
    """A pane of a muxd that crashed, from its record in the fd store (`record`'s fds
    are those the store gave back), and its program: re-adopted if it is still the
    same process; otherwise the pane is shown exited with its status unknown. No
    spawn record: nothing says who used the pane while no muxd ran
    (docs/dbus-api.md#instance-token-and-conditional-kill)."""
    adopted = ForeignProcess.adopt(record.pid, record.start_ticks) if record.running else None
    process: Reapable
    if adopted is not None:
        process = adopted
    else:
        process = ChildProcess(record.pid)
        process.returncode = record.exit_status if not record.running else EXIT_STATUS_UNKNOWN
        record = record.model_copy(update={"running": False, "exit_status": process.returncode})
    return record.model_copy(update={"spawned_by": None, "used_by_others": False}), process


def forget(record: PaneRecord) -> None:
    """A pane that is not coming back: its endpoint's and shell's directories go."""
    if record.endpoint is not None:
        with contextlib.suppress(OSError):
            os.close(record.endpoint.fd)
        remove_directory(Path(record.endpoint.directory))
    if record.shell_dir is not None:
        remove_directory(Path(record.shell_dir))


def _pane(
    record: PaneRecord,
    process: Reapable,
    *,
    settings: Settings,
    shared_reader: SharedReader,
    observer: PaneObserver,
    local_hosts: frozenset[str],
    resurrection: EndpointFactory | None,
) -> Pane:
    """The pane `record` describes, with its endpoint; not started."""
    launch = Launch.handed_over(record)
    captured_at = record.cwd_captured_at
    pane = Pane(
        pane_id=record.id,
        window=record.window,
        launch=launch,
        process=process,
        terminal=PtyChannel(
            record.master_fd,
            shared_reader.loop,
            pane_id=record.id,
            max_input_backlog=settings.max_input_backlog_bytes,
            input_backlog=record.input_backlog,
            shared_reader=shared_reader,
        ),
        view=PaneView(
            Screen.from_dump(record.rows, record.cols, record.screen_dump, record.decoder_pending),
            Scrollback.restored(
                settings.scrollback_bytes, record.scrollback, record.scrollback_total
            ),
            ModeTracker(frozenset(record.modes)),
        ),
        shell=ShellTracker(
            title=record.title,
            title_explicit=record.title_explicit,
            cwd=CwdObservation(
                record.cwd,
                record.cwd_source,
                launch.started_at if captured_at is None else captured_at,
            ),
            local_hosts=local_hosts,
            shell_token=record.shell_token,
            replay=CommandReplay.resumed(*record.replay) if record.replay is not None else None,
        ),
        observer=observer,
    )
    if record.shell_dir is not None:
        pane.shell_dir = Path(record.shell_dir)
    if record.spawned_by is not None:
        # The ledger goes on across an upgrade: clients keep their bus
        # connections (and unique names) through it, and nothing can use a
        # pane while no muxd serves.
        pane.spawn_record = SpawnRecord(record.spawned_by, record.used_by_others)
    if not record.running:
        pane.state = PaneState.EXITED
        pane.exit_status = record.exit_status
    _resume_endpoint(pane, record, resurrection)
    return pane


def _resume_endpoint(pane: Pane, record: PaneRecord, resurrection: EndpointFactory | None) -> None:
    """The endpoint the previous muxd handed over (its socket inherited); closed and
    removed when there is nothing left for it to serve."""
    pane.checkpoint_generation = record.checkpoint_generation
    saved = record.endpoint
    if saved is None:
        return
    if resurrection is None or not pane.is_running:
        with contextlib.suppress(OSError):
            os.close(saved.fd)
        remove_directory(Path(saved.directory))
        return
    pane.endpoint = resurrection.resumed(
        saved.fd,
        Path(saved.directory),
        invocation=pane.launch.invocation,
        offer=saved.offer,
        shell_launch=saved.shell_launch,
    )
    pane.endpoint.bind(pane)
