"""What a pane table hands to the next muxd: across a graceful upgrade's execve, or
through the service manager's fd store to the muxd restarted after a crash.

Everything a pane is, in a form that survives the exec: its terminal stays
the same open fd (inherited), its process stays our child; the screen goes
as avt's dump, which recreates it exactly, and the history as raw bytes.
After a crash the terminal comes back from the fd store (its fd number is
then meaningless) and the process is no longer our child (`start_ticks` tells
whether it is still the same one).
"""

from pydantic import BaseModel, ConfigDict

from mux.protocol.names import CwdSource
from mux.protocol.spawn_options import LaunchKind


class _Record(BaseModel):
    # Bytes travel as base64 in the JSON handover.
    model_config = ConfigDict(
        extra="forbid", frozen=True, ser_json_bytes="base64", val_json_bytes="base64"
    )


class EndpointRecord(_Record):
    """A launch's application-resurrection endpoint: its listening socket is inherited."""

    fd: int
    directory: str
    offer: str | None
    shell_launch: bool


class PaneRecord(_Record):
    id: int
    window: int
    pid: int
    start_ticks: int | None = None  # with the pid, names the process for good (Linux)
    kind: LaunchKind
    argv: list[str]
    program: str
    env_overrides: list[tuple[str, str]]
    invocation: str
    started_at: float
    cwd: str
    cwd_source: CwdSource
    cwd_captured_at: float | None = None  # absent from muxd before shell integration
    shell_token: str | None = None
    shell_dir: str | None = None
    # The spawn record (docs/dbus-api.md#instance-token-and-conditional-kill): who called Spawn.
    spawned_by: str | None = None
    used_by_others: bool = False
    endpoint: EndpointRecord | None = None
    checkpoint_generation: int | None = None
    replay: tuple[str, int | None, str] | None = None  # command, checkpoint generation, phase
    modes: list[int] = []  # terminal modes the repaint sets again (mouse, bracketed paste)
    title: str
    title_explicit: bool
    running: bool
    exit_status: int
    rows: int
    cols: int
    master_fd: int | None
    scrollback: bytes
    scrollback_total: int
    screen_dump: str
    decoder_pending: bytes
    input_backlog: bytes


class WindowRecord(_Record):
    id: int
    title: str
    geometry: dict[str, int | str]
    layout: str  # JSON (mux.protocol.layout)
    focused_pane: int


class TableRecord(_Record):
    token: str  # hex
    next_pane: int
    next_window: int
    panes: list[PaneRecord]
    reap: list[int]  # programs of closed panes, killed but not yet reaped
    # Absent from a muxd before windows had layouts: its panes are placed one by one.
    windows: list[WindowRecord] = []
