"""The hook scripts a shell runs to speak to mux (OSC 7 and tokened OSC 133 markers).

They ship as package data in `mux/shellintegration/`; muxd writes them into a
launch's directory and muxctl installs them into a user's startup files.
"""

from importlib import resources
from pathlib import Path


def hook_script(name: str) -> str:
    """The text of one shipped hook script (`bash.sh`, `zsh.zsh`, `fish.fish`, `nu.nu`)."""
    return (resources.files("mux") / "shellintegration" / name).read_text()


def nu_script(launch_dir: Path | None) -> str:
    """nushell's integration, for one launch (or none: installed in the user's autoload)."""
    path = str(launch_dir) if launch_dir is not None else ""
    if "'#" in path:
        raise OSError(0, "a launch directory nushell's raw string cannot hold")
    return hook_script("nu.nu").replace("__MUX_LAUNCH_DIR__", path)
