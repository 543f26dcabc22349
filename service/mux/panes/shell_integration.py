"""Shell launches with integration: a private directory and a token per launch, and how
each supported shell is started so that it loads mux's hooks without any change to the
user's startup files.

The directory, `<runtime>/shell/<random>/` (0700), holds the token (read by the
hooks at start-up into an unexported shell variable) and the small startup
files that chain to the user's own. A marker (OSC 133) that does not carry the
token is ignored by the pane, so ordinary output, a replayed recording or
another launch's markers cannot pose as this shell. The directory is removed
when the pane ends.

bash: `bash --rcfile <dir>/bashrc -i`; the rcfile does what a login shell
would (/etc/profile, then the first of ~/.bash_profile, ~/.bash_login,
~/.profile; ~/.bashrc when there is none of them), then adds the hooks.
zsh: a login shell with ZDOTDIR=<dir>, whose .zshenv puts the user's ZDOTDIR
back, sources the user's .zshenv, and adds the hooks; zsh then reads the
user's .zprofile, .zshrc and .zlogin as usual. fish: a login shell with the
launch directory's data/ first in XDG_DATA_DIRS, so that fish reads mux's file
from vendor_conf.d (before the user's config.fish); that file puts
XDG_DATA_DIRS back. nushell: the same, through its vendor autoload directory.
Other shells start as before, without integration.
"""

import logging
import os
import secrets
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from mux.protocol.shell_hooks import hook_script, nu_script

log = logging.getLogger(__name__)

SUPPORTED_SHELLS = ("bash", "zsh", "fish", "nu")
# fish's own default when XDG_DATA_DIRS is unset (its vendor_conf.d dirs are under these).
_DEFAULT_DATA_DIRS = "/usr/local/share:/usr/share"

_BASHRC = """\
# Written by mux for one launch; removed when the pane ends.
if [ -r /etc/profile ]; then . /etc/profile; fi
__mux_profile=""
for __mux_file in ~/.bash_profile ~/.bash_login ~/.profile; do
    if [ -r "$__mux_file" ]; then __mux_profile=$__mux_file; break; fi
done
if [ -n "$__mux_profile" ]; then . "$__mux_profile"; elif [ -r ~/.bashrc ]; then . ~/.bashrc; fi
unset __mux_file __mux_profile
__mux_launch_dir={dir}
. "$__mux_launch_dir/mux.bash"
unset __mux_launch_dir
"""

_ZSHENV = """\
# Written by mux for one launch; removed when the pane ends.
if [[ -n ${{MUX_USER_ZDOTDIR+set}} ]]; then ZDOTDIR=$MUX_USER_ZDOTDIR; else unset ZDOTDIR; fi
unset MUX_USER_ZDOTDIR
if [[ -r ${{ZDOTDIR:-$HOME}}/.zshenv ]]; then source ${{ZDOTDIR:-$HOME}}/.zshenv; fi
typeset -g __mux_launch_dir={dir}
source $__mux_launch_dir/mux.zsh
unset __mux_launch_dir
"""


@dataclass(frozen=True)
class ShellLaunch:
    """How to start a shell with integration."""

    exec_argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    directory: Path | None = None
    token: str | None = None


def _new_directory(parent: Path) -> Path:
    parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(parent, 0o700)
    directory = parent / secrets.token_hex(8)
    directory.mkdir(mode=0o700)
    return directory


def _write(path: Path, text: str) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as f:
        f.write(text)


def prepare_shell(program: str, parent: Path | None, env: dict[str, str]) -> ShellLaunch:
    """The launch of shell `program` (absolute path); with integration when it is a shell
    mux integrates with and `parent` (<runtime>/shell) is given. `env` is the pane's
    environment (read for ZDOTDIR)."""
    name = os.path.basename(program)
    login = ("-" + name,)  # like a terminal emulator or tmux: a login shell
    if parent is None or name not in SUPPORTED_SHELLS:
        return ShellLaunch(login)
    try:
        directory = _new_directory(parent)
    except OSError as e:
        log.warning("no shell integration for this launch: %s", e.strerror)
        return ShellLaunch(login)
    token = secrets.token_hex(16)
    quoted = shlex.quote(str(directory))
    try:
        _write(directory / "token", token + "\n")
        if name == "bash":
            _write(directory / "mux.bash", hook_script("bash.sh"))
            _write(directory / "bashrc", _BASHRC.format(dir=quoted))
            return ShellLaunch(
                (name, "--rcfile", str(directory / "bashrc"), "-i"),
                directory=directory,
                token=token,
            )
        if name in ("fish", "nu"):
            if name == "fish":
                vendor = directory / "data" / "fish" / "vendor_conf.d"
                vendor.mkdir(mode=0o700, parents=True)
                _write(vendor / "mux.fish", hook_script("fish.fish"))
            else:
                vendor = directory / "data" / "nushell" / "vendor" / "autoload"
                vendor.mkdir(mode=0o700, parents=True)
                _write(vendor / "mux.nu", nu_script(directory))
            user_dirs = env.get("XDG_DATA_DIRS", "")
            extra = {
                "XDG_DATA_DIRS": f"{directory / 'data'}:{user_dirs or _DEFAULT_DATA_DIRS}",
                "MUX_USER_XDG_DATA_DIRS": user_dirs,  # empty: it was unset
            }
            return ShellLaunch(login, env=extra, directory=directory, token=token)
        _write(directory / "mux.zsh", hook_script("zsh.zsh"))
        _write(directory / ".zshenv", _ZSHENV.format(dir=quoted))
        extra = {"ZDOTDIR": str(directory)}
        if "ZDOTDIR" in env:
            extra["MUX_USER_ZDOTDIR"] = env["ZDOTDIR"]
        return ShellLaunch(login, env=extra, directory=directory, token=token)
    except OSError as e:
        log.warning("no shell integration for this launch: %s", e.strerror)
        remove_directory(directory)
        return ShellLaunch(login)


def remove_directory(directory: Path | None) -> None:
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)
