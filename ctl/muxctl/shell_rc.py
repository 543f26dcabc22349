"""Installing mux's shell integration into a user's startup files, for people who prefer
that to mux's automatic injection (or run shells mux did not launch).

bash and zsh get one marked block at the end of ~/.bashrc or ${ZDOTDIR:-~}/.zshrc;
fish gets a file of its own in conf.d, nushell the script itself in its
autoload directory. The block only sources the integration
script (copied to $XDG_DATA_HOME/mux/shell/) inside a mux pane. Installing is
idempotent (the block is replaced, never repeated), every change to an existing
file is preceded by a timestamped backup, and uninstalling removes exactly the
block. Without a launch's token such a shell reports its working directory
(OSC 7) but no prompt or command markers.
"""

import os
import time
from dataclasses import dataclass
from pathlib import Path

SHELLS = ("bash", "zsh", "fish", "nu")
BEGIN = "# >>> mux shell integration (muxctl shell-integration uninstall {shell}) >>>"
END = "# <<< mux shell integration <<<"
_SCRIPTS = {"bash": "bash.sh", "zsh": "zsh.zsh", "fish": "fish.fish", "nu": "nu.nu"}
_SOURCE_LINES = {
    "bash": 'if [ -n "${{MUX_PANE-}}" ] && [ -r {script} ]; then . {script}; fi',
    "zsh": "if [[ -n ${{MUX_PANE-}} && -r {script} ]]; then source {script}; fi",
    "fish": "if set -q MUX_PANE; and test -r {script}; source {script}; end",
}


def script_text(shell: str) -> str:
    from mux.protocol.shell_hooks import hook_script, nu_script

    return nu_script(None) if shell == "nu" else hook_script(_SCRIPTS[shell])


@dataclass(frozen=True)
class Places:
    script: Path  # where the integration script is copied
    startup: Path  # the file that gets the block (fish: a file of its own)


def places(shell: str, environ: dict[str, str]) -> Places:
    home = Path(environ.get("HOME") or Path.home())
    data = Path(environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    config = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    script = data / "mux" / "shell" / f"mux.{shell}"
    if shell == "bash":
        startup = home / ".bashrc"
    elif shell == "zsh":
        startup = Path(environ.get("ZDOTDIR") or home) / ".zshrc"
    elif shell == "fish":
        startup = config / "fish" / "conf.d" / "mux.fish"
    else:  # nushell's user autoload directory: the script itself goes there
        startup = config / "nushell" / "autoload" / "mux.nu"
    return Places(script, startup)


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "'\\''") + "'"


def block(shell: str, script: Path) -> str:
    line = _SOURCE_LINES[shell].format(script=_quote(script))
    return f"{BEGIN.format(shell=shell)}\n{line}\n{END}\n"


def without_block(text: str) -> str:
    """`text` with mux's block (if any) taken out, everything else as it was."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("# >>> mux shell integration")]
    if not starts:
        return text
    start = starts[0]
    end = next((i for i in range(start, len(lines)) if lines[i].rstrip("\n") == END), None)
    if end is None:
        return text  # a damaged block: leave the file alone rather than guess
    return "".join(lines[:start] + lines[end + 1 :])


def with_block(text: str, shell: str, script: Path) -> str:
    rest = without_block(text)
    if rest and not rest.endswith("\n"):
        rest += "\n"
    return rest + block(shell, script)


def replace_file(path: Path, text: str) -> Path | None:
    """Write `text` to `path` atomically, keeping its mode; returns the backup made of the
    previous content (None when there was no file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    backup = back_up(path) if path.exists() else None
    _atomic_write(path, text.encode(), mode)
    return backup


def back_up(path: Path) -> Path:
    """A copy of `path` beside it, named after the time; never overwrites one."""
    stem = f"{path.name}.mux-backup-{time.strftime('%Y%m%dT%H%M%S')}"
    backup = path.with_name(stem)
    counter = 1
    while backup.exists():
        counter += 1
        backup = path.with_name(f"{stem}~{counter}")
    backup.write_bytes(path.read_bytes())
    os.chmod(backup, path.stat().st_mode & 0o7777)
    return backup


def _atomic_write(path: Path, data: bytes, mode: int) -> None:
    temporary = path.with_name(f".{path.name}.mux-{os.getpid()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(descriptor, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
