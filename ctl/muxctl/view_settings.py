"""The settings of config.toml that `muxctl attach` itself follows: `status`.

muxd reads and checks the whole file (mux.config; `muxctl doctor` too). The window view
needs one key of it, read here with tomllib alone: loading mux.config's pydantic
models would add a few hundred milliseconds to every attach. As in mux.config, an
environment variable MUX_<NAME> wins over the file; a value this cannot read is
left to muxd and doctor to report, and the default is used.
"""

import os
import tomllib

from mux.system.paths import resolve_paths

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
MAX_CONFIG_BYTES = 1 << 20  # (a configuration file is a few hundred bytes)


def status_line() -> bool:
    """Whether the window view shows a status line (`status`, default true)."""
    from_env = os.environ.get("MUX_STATUS", "").strip().lower()
    if from_env in _TRUE or from_env in _FALSE:
        return from_env in _TRUE
    try:
        with resolve_paths().config_file.open("rb") as f:
            value = tomllib.loads(f.read(MAX_CONFIG_BYTES).decode()).get("status", True)
    except (OSError, ValueError, RecursionError):  # (absent, unreadable, not TOML)
        return True
    return value if isinstance(value, bool) else True
