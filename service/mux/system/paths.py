"""XDG paths of docs/paths.md and the safety checks on the runtime directory.

Kept free of heavy imports: `muxctl` uses it on every call. It finds its bus with
`runtime_dir` alone; pathlib (with urllib.parse and ipaddress, ~4 ms of a call) is
loaded by `resolve_paths`, for the rest.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

# mux's private bus, started by muxd when there is no other: <runtime>/bus.
PRIVATE_BUS = "bus"


class RuntimeDirError(Exception):
    """The runtime directory cannot be used safely; the message says why and what to do."""


# A plain class: muxctl imports this on every call. A dataclass would load inspect
# (~8 ms); a NamedTuple's fields are checked when it is made, and "Path" (a string
# here) would cost muxctl the first compile() of its run (~1 ms).
class Paths:
    __slots__ = ("config_file", "runtime", "state")

    def __init__(self, runtime: Path, state: Path, config_file: Path) -> None:
        self.runtime = runtime
        self.state = state
        self.config_file = config_file

    @property
    def attach_socket(self) -> Path:
        return self.runtime / "mux.sock"

    @property
    def private_bus(self) -> Path:
        return self.runtime / PRIVATE_BUS

    @property
    def lock_file(self) -> Path:
        return self.runtime / "muxd.lock"

    @property
    def upgrade_outcome(self) -> Path:
        """The last upgrade's outcome, for `muxctl upgrade` (see mux.lifecycle.upgrade)."""
        return self.runtime / "upgrade.json"

    @property
    def daemon_log(self) -> Path:
        """Where a muxd started in the background by muxctl writes its log."""
        return self.runtime / "muxd.log"

    @property
    def session_file(self) -> Path:
        return self.state / "session.json"

    @property
    def checkpoints(self) -> Path:
        return self.state / "checkpoints"

    @property
    def quarantine(self) -> Path:
        return self.state / "quarantine"

    @property
    def history(self) -> Path:
        return self.state / "history"

    @property
    def hosts_file(self) -> Path:
        """The hosts added with AddHost (docs/federation.md#hosts)."""
        return self.state / "hosts.json"

    def host_dir(self, name: str) -> Path:
        """Where a host's link lives: ssh's control socket and the forwarded sockets."""
        return self.runtime / "hosts" / name


def _home(environ: Mapping[str, str]) -> str:
    home = environ.get("HOME", "")
    if os.path.isabs(home):
        return home
    # Unset or relative (which would make every path depend on the cwd): the
    # home directory of the account.
    import pwd

    return pwd.getpwuid(os.getuid()).pw_dir


def _xdg(environ: Mapping[str, str], name: str) -> str | None:
    # The XDG spec says relative values are invalid and must be ignored.
    value = environ.get(name, "")
    return value if value and os.path.isabs(value) else None


def runtime_dir(environ: Mapping[str, str] | None = None) -> str:
    """`<runtime>` (docs/paths.md), as a string."""
    env = os.environ if environ is None else environ
    xdg_runtime = env.get("XDG_RUNTIME_DIR", "")
    if xdg_runtime and os.path.isabs(xdg_runtime):
        return os.path.join(xdg_runtime, "mux")
    return f"/tmp/mux-{os.getuid()}"


def resolve_paths(environ: Mapping[str, str] | None = None) -> Paths:
    from pathlib import Path  # not at the top: see the module's docstring

    env = os.environ if environ is None else environ
    home = Path(_home(env))
    state = Path(_xdg(env, "XDG_STATE_HOME") or home / ".local" / "state") / "mux"
    config = Path(_xdg(env, "XDG_CONFIG_HOME") or home / ".config") / "mux" / "config.toml"
    return Paths(runtime=Path(runtime_dir(env)), state=state, config_file=config)


def check_private_dir(path: str | os.PathLike[str]) -> None:
    """Refuse a directory that is not ours or that others can reach."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise RuntimeDirError(f"{path} does not exist") from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise RuntimeDirError(f"{path} is not a directory (refusing to follow a symlink)")
    if st.st_uid != os.getuid():
        raise RuntimeDirError(
            f"{path} is owned by uid {st.st_uid}, not by you (uid {os.getuid()}); "
            "remove it or set XDG_RUNTIME_DIR"
        )
    if st.st_mode & 0o077:
        raise RuntimeDirError(
            f"{path} is accessible to other users (mode {stat.S_IMODE(st.st_mode):04o}); "
            f"run 'chmod 700 {path}' if you trust its contents, or remove it"
        )


def ensure_private_dir(path: Path) -> Path:
    """Create `path` with mode 0700 if missing, then check it is ours and private."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    else:
        os.chmod(path, 0o700)  # mkdir's mode is filtered through the umask
    check_private_dir(path)
    return path


def ensure_runtime_dir(paths: Paths) -> Path:
    """The runtime dir, created if needed; its parent must already exist."""
    return ensure_private_dir(paths.runtime)
