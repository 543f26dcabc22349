"""muxctl uninstall: remove what `muxctl install` installed.

A running mux keeps running (stopping it would end every pane); the message
says how to stop it.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

from muxctl.commands.command import LocalCommand
from muxctl.output import print_json_or_lines


def run(args: argparse.Namespace) -> int:
    from mux.system.paths import resolve_paths
    from muxctl.installation import desktop_files, launchd_file, systemd_files, xdg_dirs
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
        config_home, data_home = xdg_dirs()
        installed = [*systemd_files(config_home, data_home), *desktop_files(data_home)]
        files = [f.path for f in installed]
        if manager_reachable():
            systemctl("disable", "mux.socket", "mux.service", "mux-web.socket", "mux-web.service")
            actions.append(
                "systemctl --user disable mux.socket mux.service mux-web.socket mux-web.service"
            )
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
    lines = [*(f"removed {path_text}" for path_text in removed), *actions]
    if not removed:
        lines.append("nothing was installed")
    print_json_or_lines(args.json, {"removed": removed, "actions": actions}, lines)
    return 0


COMMAND = LocalCommand(
    name="uninstall", help="remove the units (or launch agent) that install wrote", run=run
)
