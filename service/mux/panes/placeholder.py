"""A pane that holds the place of one that could not be started again.

A restore that cannot start a saved pane (its program is gone, its old process
still runs) does not drop it from its window: a pane with no process takes its
leaf, shows the saved program, directory, title and size, and says on its screen
why it is not running. It is "exited" with EXIT_STATUS_NOT_STARTED and Pid 0, so
nothing signals, reaps, keeps or lingers it; it stays until it is killed (which
gives up on the saved pane) or the next start restores the pane for real
(docs/windows.md#persistence). As zellij keeps a resurrected command pane that
did not run, and tmux a dead pane, in its place.
"""

from dataclasses import dataclass

from mux.config import Settings
from mux.panes.cwd import CwdObservation
from mux.panes.held import PendingStart
from mux.panes.launch import Launch
from mux.panes.pane import Pane, PaneObserver, PaneState
from mux.panes.pane_view import PaneView
from mux.panes.process import NoProcess
from mux.panes.pty_channel import PtyChannel
from mux.panes.shell_tracker import ShellTracker
from mux.protocol.names import EXIT_STATUS_NOT_STARTED
from mux.protocol.visible import visible
from mux.system.shared_reader import SharedReader


@dataclass(frozen=True)
class NotStarted:
    """What the place holder shows of the pane it stands for, and why it did not start."""

    launch: Launch
    title: str
    title_explicit: bool
    cwd: CwdObservation
    rows: int
    cols: int
    reason: str  # why it did not start ("" for a pane held until started)
    contents: bytes = b""  # its old contents (mux.terminal.saved_contents), shown first


def placeholder_pane(
    held: NotStarted,
    pending: PendingStart | None = None,
    *,
    pane_id: int,
    window: int,
    settings: Settings,
    shared_reader: SharedReader,
    observer: PaneObserver,
) -> Pane:
    """The place holder, with its old contents and its explanation on its screen; not
    started. With `pending`, a pane held until started (mux.panes.held)."""
    pane = Pane(
        pane_id=pane_id,
        window=window,
        launch=held.launch,
        process=NoProcess(),
        terminal=PtyChannel(
            None,
            shared_reader.loop,
            pane_id=pane_id,
            max_input_backlog=settings.max_input_backlog_bytes,
            shared_reader=shared_reader,
        ),
        view=PaneView.blank(held.rows, held.cols, settings.scrollback_bytes),
        shell=ShellTracker(title=held.title, title_explicit=held.title_explicit, cwd=held.cwd),
        observer=observer,
    )
    if held.contents:
        pane.show_saved_contents(held.contents)
    if pending is not None:
        pane.state = PaneState.HELD
        pane.show_notice(pending.waiting)
        return pane
    pane.state = PaneState.EXITED
    pane.exit_status = EXIT_STATUS_NOT_STARTED
    pane.show_notice(
        f"mux: {visible(held.launch.argv[0])} was not started again: {visible(held.reason)}.\r\n"
        "mux: this pane keeps its place and the saved pane is tried again at the next "
        "start; killing this pane gives it up (muxctl kill)."
    )
    return pane
