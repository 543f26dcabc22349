"""Signal names accepted by `Signal` (docs/dbus-api.md): "TERM", "HUP", "INT", "KILL", ..."""

import signal

from mux.protocol.errors import InvalidArgument

# Signals a client may send to a pane's foreground process group. Real-time
# and job-control-internal signals are left out on purpose.
ALLOWED_SIGNALS: frozenset[str] = frozenset(
    {
        "HUP",
        "INT",
        "QUIT",
        "ILL",
        "TRAP",
        "ABRT",
        "BUS",
        "FPE",
        "KILL",
        "USR1",
        "SEGV",
        "USR2",
        "PIPE",
        "ALRM",
        "TERM",
        "CHLD",
        "CONT",
        "STOP",
        "TSTP",
        "TTIN",
        "TTOU",
        "URG",
        "XCPU",
        "XFSZ",
        "VTALRM",
        "PROF",
        "WINCH",
        "IO",
        "SYS",
    }
)


def parse_signal(name: str) -> signal.Signals:
    """Turn "TERM" (or "SIGTERM", any case) into the signal; refuse anything else."""
    bare = name.strip().upper().removeprefix("SIG")
    if bare not in ALLOWED_SIGNALS or not hasattr(signal, "SIG" + bare):
        raise InvalidArgument(
            f"unknown signal {name!r}: use a name such as TERM, HUP, INT, KILL, USR1 or WINCH"
        )
    return signal.Signals[f"SIG{bare}"]
