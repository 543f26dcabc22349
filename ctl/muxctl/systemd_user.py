"""Running `systemctl --user`, when a user service manager is there to answer."""

import os
import shutil
import subprocess
from pathlib import Path


def manager_reachable(environ: dict[str, str] | None = None) -> bool:
    env = dict(os.environ) if environ is None else environ
    runtime = env.get("XDG_RUNTIME_DIR", "")
    return (
        bool(runtime)
        and Path(runtime, "systemd", "private").is_socket()
        and bool(shutil.which("systemctl"))
    )


def systemctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["systemctl", "--user", *args], capture_output=True, text=True, check=False, timeout=60
    )
