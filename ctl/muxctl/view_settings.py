"""The settings of config.toml that `muxctl attach` itself follows: `status`, `mouse`,
`mode_keys`, `prefix`, `[keys]`.

muxd reads and checks the whole file (mux.config; `muxctl doctor` too). The window view
needs one key of it, read here with tomllib alone: loading mux.config's pydantic
models would add a few hundred milliseconds to every attach. As in mux.config, an
environment variable MUX_<NAME> wins over the file; a value this cannot read is
left to muxd and doctor to report, and the default is used.
"""

import os
import tomllib
from pathlib import Path
from typing import Literal

from mux.system.paths import resolve_paths
from mux.window_keys import DEFAULT_KEYS, UNBOUND, binding_problem, key_of

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
MAX_CONFIG_BYTES = 1 << 20  # (a configuration file is a few hundred bytes)


def status_line() -> bool:
    """Whether the window view shows a status line (`status`, default true)."""
    return _switch("status")


def mouse() -> bool:
    """Whether the window view takes the mouse (`mouse`, default true)."""
    return _switch("mouse")


def _switch(name: str) -> bool:
    """A setting that is true or false, true unless set otherwise."""
    from_env = os.environ.get(f"MUX_{name.upper()}", "").strip().lower()
    if from_env in _TRUE or from_env in _FALSE:
        return from_env in _TRUE
    value = _config().get(name, True)
    return value if isinstance(value, bool) else True


def mode_keys() -> Literal["vi", "emacs"]:
    """Copy mode's keys (`mode_keys`): unset, vi when $VISUAL or $EDITOR names vi (vim,
    nvim...), else emacs, as tmux decides."""
    chosen = os.environ.get("MUX_MODE_KEYS", "").strip().lower() or _config().get("mode_keys")
    if chosen in ("vi", "emacs"):
        return "vi" if chosen == "vi" else "emacs"
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or ""
    return "vi" if "vi" in Path(editor).name else "emacs"


def prefix_key() -> str:
    """The prefix key as written (`prefix`, default `^b`, as tmux's); muxctl's own
    --prefix-key and $MUXCTL_PREFIX_KEY win over it."""
    chosen = os.environ.get("MUX_PREFIX", "").strip() or _config().get("prefix")
    if isinstance(chosen, str):
        try:
            key_of(chosen)
            return chosen
        except ValueError:
            pass  # (mux.config and doctor say so)
    return "^b"


def key_bindings() -> dict[bytes, str]:
    """Each key after the prefix and its command: the defaults, with `[keys]` over them
    (a key bound to "none" unbound; a binding mux.config would refuse left out)."""
    bindings = {key.encode(): command for key, command in DEFAULT_KEYS.items()}
    table = _config().get("keys", {})
    for key, command in table.items() if isinstance(table, dict) else ():
        if not isinstance(command, str) or binding_problem(key, command) is not None:
            continue
        if command == UNBOUND:
            bindings.pop(key.encode(), None)
        else:
            bindings[key.encode()] = command
    return bindings


def _config() -> dict[str, object]:
    try:
        with resolve_paths().config_file.open("rb") as f:
            return tomllib.loads(f.read(MAX_CONFIG_BYTES).decode())
    except (OSError, ValueError, RecursionError):  # (absent, unreadable, not TOML)
        return {}
