"""What `muxctl install` writes, where, and how it is rendered from the shipped files.

The shipped unit files (units/, launchd/) name /usr/bin paths, as a package
installs them. For a user's own installation the commands are rewritten to
run this installation's interpreter directly, never a shim: the command lines
of mux.system.muxd_command (docs/systemd.md#installing).
"""

import os
import plistlib
import shlex
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from mux.system.muxd_command import muxctl_argv, muxd_argv
from mux.system.paths import Paths

UNIT_FILES = ("mux.service", "mux.socket")
DBUS_SERVICE_FILE = "org.mux.Mux1.service"
LAUNCHD_PLIST = "org.mux.muxd.plist"


@dataclass(frozen=True)
class InstalledFile:
    path: Path
    content: bytes


def _shipped(directory: str, name: str) -> str:
    return (resources.files("mux") / directory / name).read_text()


def systemd_quote(argv: list[str]) -> str:
    """A command line for ExecStart=: systemd expands % specifiers and C escapes."""

    def one(arg: str) -> str:
        escaped = (
            arg.replace("\\", "\\\\").replace("%", "%%").replace("$", "$$").replace('"', '\\"')
        )
        return f'"{escaped}"' if any(c.isspace() or c in "'\";" for c in arg) else escaped

    return " ".join(one(arg) for arg in argv)


def _rewrite(text: str, replacements: dict[str, str]) -> str:
    lines = []
    for line in text.splitlines():
        key = line.split("=", 1)[0]
        lines.append(f"{key}={replacements[key]}" if key in replacements else line)
    return "\n".join(lines) + "\n"


def systemd_files(config_home: Path, data_home: Path) -> list[InstalledFile]:
    unit_dir = config_home / "systemd" / "user"
    service = _rewrite(
        _shipped("unitfiles", "mux.service"),
        {
            "ExecStart": systemd_quote(muxd_argv()),
            "ExecReload": systemd_quote([*muxctl_argv(), "--no-start", "upgrade"]),
        },
    )
    dbus = _rewrite(_shipped("unitfiles", DBUS_SERVICE_FILE), {"Exec": shlex.join(muxd_argv())})
    web = _rewrite(
        _shipped("unitfiles", "mux-web.service"),
        {"ExecStart": systemd_quote([*muxctl_argv(), "web", "--no-open"])},
    )
    return [
        InstalledFile(unit_dir / "mux.service", service.encode()),
        InstalledFile(unit_dir / "mux.socket", _shipped("unitfiles", "mux.socket").encode()),
        InstalledFile(unit_dir / "mux-web.service", web.encode()),
        InstalledFile(
            unit_dir / "mux-web.socket", _shipped("unitfiles", "mux-web.socket").encode()
        ),
        InstalledFile(data_home / "dbus-1" / "services" / DBUS_SERVICE_FILE, dbus.encode()),
    ]


def launchd_file(home: Path, paths: Paths) -> InstalledFile:
    plist = plistlib.loads(_shipped("launchdfiles", LAUNCHD_PLIST).encode())
    plist["ProgramArguments"] = muxd_argv()
    plist["Sockets"]["attach"]["SockPathName"] = str(paths.attach_socket)
    # Logs in the user's own Library, not in /tmp where another user could plant a link.
    log = home / "Library" / "Logs" / "mux" / "muxd.log"
    plist["StandardOutPath"] = plist["StandardErrorPath"] = str(log)
    # launchd's PATH is /usr/bin:/bin:/usr/sbin:/sbin; dbus-daemon and shells often
    # live elsewhere (Homebrew), so the agent gets the PATH of the installing user.
    plist["EnvironmentVariables"] = {"PATH": os.environ.get("PATH", os.defpath)}
    return InstalledFile(home / "Library" / "LaunchAgents" / LAUNCHD_PLIST, plistlib.dumps(plist))


DESKTOP_ENTRY = "org.mux.Mux.desktop"
# GNOME Shell reads search providers from the system's data dirs only: packages
# install org.mux.Mux.search-provider.ini there, muxctl install cannot.
SEARCH_PROVIDER_NOTE = (
    "GNOME Shell reads search providers only from system directories: the mux package "
    "installs org.mux.Mux.search-provider.ini there (KRunner's plugin is installed here)"
)


def desktop_exec(argv: list[str]) -> str:
    """An Exec= value (the Desktop Entry Specification's quoting, not a shell's)."""

    def one(arg: str) -> str:
        if not any(c.isspace() or c in "\"'\\><~|&;$*?#()`" for c in arg):
            return arg
        escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg)
        return f'"{escaped}"'

    return " ".join(one(arg) for arg in argv)


def desktop_files(data_home: Path) -> list[InstalledFile]:
    """The desktop entry (its Exec lines this installation's muxctl) and KRunner's plugin."""
    entry = _shipped("desktopfiles", DESKTOP_ENTRY)
    lines = []
    for line in entry.splitlines():
        key, _, value = line.partition("=")
        exec_line = f"Exec={desktop_exec([*muxctl_argv(), *value.split()[1:]])}"
        lines.append(exec_line if key == "Exec" else line)
    krunner = _shipped("desktopfiles", f"krunner/{DESKTOP_ENTRY}")
    return [
        InstalledFile(
            data_home / "applications" / DESKTOP_ENTRY, ("\n".join(lines) + "\n").encode()
        ),
        InstalledFile(data_home / "krunner" / "dbusplugins" / DESKTOP_ENTRY, krunner.encode()),
    ]


def xdg_dirs(environ: dict[str, str] | None = None) -> tuple[Path, Path]:
    """($XDG_CONFIG_HOME, $XDG_DATA_HOME), with their defaults."""
    env = dict(os.environ) if environ is None else environ
    home = Path(env.get("HOME") or Path.home())

    def xdg(name: str, default: Path) -> Path:
        value = env.get(name, "")
        return Path(value) if os.path.isabs(value) else default

    return xdg("XDG_CONFIG_HOME", home / ".config"), xdg("XDG_DATA_HOME", home / ".local" / "share")


def write_file(file: InstalledFile) -> bool:
    """Write atomically; False when the file already had exactly this content."""
    try:
        if file.path.read_bytes() == file.content:
            return False
    except OSError:
        pass
    file.path.parent.mkdir(parents=True, exist_ok=True)
    temporary = file.path.with_name(f".{file.path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(file.content)
    os.replace(temporary, file.path)
    return True
