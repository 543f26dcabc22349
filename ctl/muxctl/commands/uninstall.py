"""muxctl uninstall: remove what `muxctl install` installed.

A running mux keeps running (stopping it would end every pane); the message
says how to stop it.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

from muxctl.output import print_json

NAME = "uninstall"
HELP = "remove the units (or launch agent) that install wrote"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run_local(args: argparse.Namespace) -> int:
    from mux.system.paths import resolve_paths
    from muxctl.installation import launchd_file, systemd_files, xdg_dirs
    from muxctl.systemd_user import manager_reachable, systemctl

    actions: list[str] = []
    if sys.platform == "darwin":
        file = launchd_file(Path(os.environ.get("HOME") or Path.home()), resolve_paths())
        subprocess.run(
            ["launchctl", "bootout", f"gui/{os.getuid()}", str(file.path)],
            capture_output=True,
            check=False,
        )
        files = [file.path]
    else:
        files = [f.path for f in systemd_files(*xdg_dirs())]
        if manager_reachable():
            systemctl("disable", "mux.socket", "mux.service")
            actions.append("systemctl --user disable mux.socket mux.service")
    removed = []
    for path in files:
        try:
            path.unlink()
            removed.append(str(path))
        except FileNotFoundError:
            pass
    if sys.platform != "darwin" and manager_reachable():
        systemctl("daemon-reload")
        actions.append("systemctl --user daemon-reload")
        if systemctl("is-active", "--quiet", "mux.service").returncode == 0:
            actions.append(
                "mux is still running; 'systemctl --user stop mux' ends it and its panes"
            )
    if args.json:
        print_json({"removed": removed, "actions": actions})
    else:
        for path_text in removed:
            print(f"removed {path_text}")
        for action in actions:
            print(action)
        if not removed:
            print("nothing was installed")
    return 0
