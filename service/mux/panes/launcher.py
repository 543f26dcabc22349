"""Everything a pane's program needs before it starts, and undoing it when it cannot.

A SpawnRequest becomes a `PreparedLaunch`: the directory checked, the
environment (docs/configuration.md#settings), the program resolved as execvp
would, a shell's integration directory and token
(docs/shell-integration.md#how-each-shell-is-started), the launch's
application-resurrection endpoint (docs/resurrection-protocol.md#the-endpoint).
Its `start` starts the program on a new PTY; when anything fails on the way,
what was made for the launch is removed again, and a program that was started
for a pane that never came to be is killed and reaped (`abandon`). Once the
program runs, `launched_pane` is its pane.
"""

import contextlib
import logging
import os
import pwd
import secrets
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mux.config import Settings
from mux.panes.cwd import CwdObservation
from mux.panes.environment import pane_environment
from mux.panes.launch import Launch
from mux.panes.launch_endpoint import EndpointFactory, LaunchEndpoint
from mux.panes.ledger import SpawnRecord
from mux.panes.pane import Pane, PaneObserver
from mux.panes.pane_view import PaneView
from mux.panes.process import StartedProcess, check_directory, resolve_program, start_on_pty
from mux.panes.pty_channel import PtyChannel
from mux.panes.shell_integration import ShellLaunch, prepare_shell, remove_directory
from mux.panes.shell_tracker import ShellTracker
from mux.protocol.environment import ENDPOINT_VARIABLE
from mux.protocol.spawn_options import LaunchKind, SpawnRequest
from mux.system.shared_reader import SharedReader

log = logging.getLogger(__name__)


def login_shell() -> str:
    try:
        shell = pwd.getpwuid(os.getuid()).pw_shell
    except KeyError:
        shell = ""
    return shell or os.environ.get("SHELL") or "/bin/sh"


@dataclass(frozen=True)
class PreparedLaunch:
    request: SpawnRequest
    argv: tuple[str, ...]  # as the pane reports it
    program: str  # absolute path
    exec_argv: tuple[str, ...]  # as the program is started (a shell: with its integration)
    env: dict[str, str]
    cwd: str
    rows: int
    cols: int
    invocation: str
    shell_launch: ShellLaunch | None
    endpoint: LaunchEndpoint | None

    def launch(self) -> Launch:
        """The launch record, started now."""
        return Launch(
            kind=self.request.kind,
            argv=self.argv,
            program=self.program,
            env_overrides=tuple(sorted(self.request.env.items())),
            invocation=self.invocation,
        )

    @property
    def title(self) -> str:
        request = self.request
        return request.title if request.title is not None else os.path.basename(self.argv[0])

    def start(self) -> StartedProcess:
        """The program, started on a new PTY; on failure, the launch undone."""
        try:
            return start_on_pty(
                self.program,
                self.exec_argv,
                env=self.env,
                cwd=self.cwd,
                rows=self.rows,
                cols=self.cols,
            )
        except BaseException:
            self.undo()
            raise

    def undo(self) -> None:
        if self.shell_launch is not None:
            remove_directory(self.shell_launch.directory)
        if self.endpoint is not None:
            self.endpoint.close()


def launched_pane(
    prepared: PreparedLaunch,
    started: StartedProcess,
    *,
    pane_id: int,
    window: int,
    settings: Settings,
    shared_reader: SharedReader,
    observer: PaneObserver,
    local_hosts: frozenset[str],
    spawner: str | None,
) -> Pane:
    """The pane of a program just started, complete; not started (nothing read yet).
    `spawner`: the bus connection that called Spawn, for the spawn ledger."""
    launch = prepared.launch()
    shell_launch = prepared.shell_launch
    pane = Pane(
        pane_id=pane_id,
        window=window,
        launch=launch,
        process=started.process,
        terminal=PtyChannel(
            started.master_fd,
            shared_reader.loop,
            pane_id=pane_id,
            max_input_backlog=settings.max_input_backlog_bytes,
            shared_reader=shared_reader,
        ),
        view=PaneView.blank(prepared.rows, prepared.cols, settings.scrollback_bytes),
        shell=ShellTracker(
            title=prepared.title,
            title_explicit=prepared.request.title is not None,
            cwd=CwdObservation(prepared.cwd, "launch", launch.started_at),
            local_hosts=local_hosts,
            shell_token=shell_launch.token if shell_launch is not None else None,
        ),
        observer=observer,
    )
    if shell_launch is not None:
        pane.shell_dir = shell_launch.directory
    if spawner is not None:
        pane.spawn_record = SpawnRecord(spawner)
    if prepared.endpoint is not None:
        pane.endpoint = prepared.endpoint
        prepared.endpoint.bind(pane)
    return pane


def abandon(started: StartedProcess) -> None:
    """A program whose pane was never published: it must not outlive the failure."""
    with contextlib.suppress(OSError):
        os.killpg(started.process.pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(started.process.pid, 0)
    with contextlib.suppress(OSError):
        os.close(started.master_fd)


class Launcher:
    def __init__(
        self,
        settings: Settings,
        service_env: Mapping[str, str],
        *,
        shell_dirs: Path | None,
        resurrection: EndpointFactory | None,
    ) -> None:
        self._settings = settings
        self._service_env = dict(service_env)
        self._shell_dirs = shell_dirs
        self._resurrection = resurrection

    def home(self) -> str:
        return self._service_env.get("HOME") or os.path.expanduser("~")

    def size_of(self, request: SpawnRequest) -> tuple[int, int]:
        """The rows and columns the launch's pane starts with."""
        settings = self._settings
        return request.rows or settings.default_rows, request.cols or settings.default_cols

    def prepare(self, request: SpawnRequest, *, pane_id: int, offer: str | None) -> PreparedLaunch:
        """`pane_id`: the id the pane will have (its environment names it); `offer`: the
        reference the launch's application gets back (a restore)."""
        settings = self._settings
        cwd = request.cwd or self.home()
        check_directory(cwd)
        env = pane_environment(self._service_env, request.env, term=settings.term, pane_id=pane_id)
        shell_launch = None
        if request.kind is LaunchKind.EXPLICIT:
            wanted = request.program or request.argv[0]
            program = resolve_program(wanted, cwd=cwd, path=env.get("PATH"))
            argv = exec_argv = request.argv
        else:
            shell = request.shell or settings.default_shell or login_shell()
            program = resolve_program(shell, cwd=cwd, path=env.get("PATH"))
            argv = (program,)
            shell_launch = prepare_shell(program, self._shell_dirs, env)
            exec_argv = shell_launch.exec_argv
            env.update(shell_launch.env)
        invocation = request.invocation or secrets.token_hex(16)
        endpoint = self._open_endpoint(request, invocation, offer)
        if endpoint is not None:
            env[ENDPOINT_VARIABLE] = str(endpoint.path)
        rows, cols = self.size_of(request)
        return PreparedLaunch(
            request=request,
            argv=argv,
            program=program,
            exec_argv=exec_argv,
            env=env,
            cwd=cwd,
            rows=rows,
            cols=cols,
            invocation=invocation,
            shell_launch=shell_launch,
            endpoint=endpoint,
        )

    def _open_endpoint(
        self, request: SpawnRequest, invocation: str, offer: str | None
    ) -> LaunchEndpoint | None:
        """The launch's application-resurrection endpoint, when it is to have one."""
        settings = self._settings
        wanted = settings.resurrection if request.resurrection is None else request.resurrection
        if not wanted or not settings.resurrection or self._resurrection is None:
            return None  # (the adapter disabled in configuration wins over the option)
        try:
            return self._resurrection.open(
                invocation=invocation,
                offer=offer,
                shell_launch=request.kind is not LaunchKind.EXPLICIT,
            )
        except OSError as e:
            log.error("no application-resurrection endpoint for this launch: %s", e.strerror)
            return None
