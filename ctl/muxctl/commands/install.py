"""muxctl install [--enable] [--now]: install mux's units for this user.

Linux: the systemd user units and the D-Bus activation file, then
`systemctl --user daemon-reload`; --enable starts mux at login, --now starts
its socket right away. macOS: the launch agent; --enable loads it.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

from muxctl.commands.command import LocalCommand
from muxctl.errors import CtlError
from muxctl.output import print_json_or_lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--enable", action="store_true", help="start mux at every login")
    parser.add_argument("--now", action="store_true", help="start listening right away")


def run(args: argparse.Namespace) -> int:
    from mux.system.paths import resolve_paths
    from muxctl.installation import (
        SEARCH_PROVIDER_NOTE,
        desktop_files,
        launchd_file,
        systemd_files,
        write_file,
        xdg_dirs,
    )

    if sys.platform == "darwin":
        files = [launchd_file(Path(os.environ.get("HOME") or Path.home()), resolve_paths())]
    else:
        config_home, data_home = xdg_dirs()
        files = [*systemd_files(config_home, data_home), *desktop_files(data_home)]
    report = [{"path": str(f.path), "changed": write_file(f)} for f in files]
    if sys.platform == "darwin":
        actions = _activate(args, files[0].path)
    else:
        actions = [*_reload_bus(), *_systemd(args), SEARCH_PROVIDER_NOTE]
    written = [
        f"{'wrote' if entry['changed'] else 'unchanged'} {entry['path']}" for entry in report
    ]
    print_json_or_lines(args.json, {"files": report, "actions": actions}, [*written, *actions])
    return 0


def _reload_bus() -> list[str]:
    """Make the running bus read the new activation file now, not whenever it notices."""
    from mux.system.busaddr import BusKind, choose_bus
    from mux.system.paths import resolve_paths

    choice = choose_bus(resolve_paths())
    if choice.kind is BusKind.PRIVATE:
        return []  # mux's own bus has no activation files to read

    def reload() -> bool:
        from muxctl.client import MuxClient, open_bus
        from muxctl.errors import CtlError, RemoteError

        try:
            connection = open_bus(choice)
        except CtlError:  # no bus answers there: nothing to reload
            return False
        client = MuxClient(connection, choice)
        try:
            client.ask_bus("ReloadConfig")
        except RemoteError:  # the bus would not (a policy refusing it, say)
            return False
        finally:
            client.close()
        return True

    return [f"reloaded the {choice.kind} bus's configuration"] if reload() else []


def _systemd(args: argparse.Namespace) -> list[str]:
    from muxctl.systemd_user import manager_reachable, systemctl

    if not manager_reachable():
        return [
            "no systemd user manager answers here: run 'systemctl --user daemon-reload' "
            "in your session (muxctl starts muxd itself meanwhile)"
        ]
    steps: list[tuple[str, ...]] = [("daemon-reload",)]
    if args.enable:
        steps.append(("enable", "mux.socket", "mux.service"))
    if args.now:
        steps.append(("start", "mux.socket"))
    done = []
    for step in steps:
        result = systemctl(*step)
        if result.returncode != 0:
            raise CtlError(f"systemctl --user {' '.join(step)} failed: {result.stderr.strip()}")
        done.append(f"systemctl --user {' '.join(step)}")
    return done


def _activate(args: argparse.Namespace, plist: Path) -> list[str]:
    if not (args.enable or args.now):
        return []
    target = f"gui/{os.getuid()}"
    result = subprocess.run(
        ["launchctl", "bootstrap", target, str(plist)], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise CtlError(f"launchctl bootstrap failed: {result.stderr.strip()}")
    return [f"launchctl bootstrap {target} {plist}"]


COMMAND = LocalCommand(
    name="install",
    help="install the systemd user units (launchd agent on macOS) for this user",
    add_arguments=add_arguments,
    run=run,
)
