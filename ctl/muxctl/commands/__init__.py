"""One module per verb, each exporting NAME, HELP, add_arguments() and run(),
and optionally check(), which muxctl calls before it connects or starts muxd,
STARTS_SERVICE = False for verbs that must not start the service,
report_not_running(), which answers for such a verb when nothing runs, and
run_local(args) instead of run() for verbs that do not talk to the service.

The verbs are listed once, in `COMMANDS`, in the order `--help` shows them.
"""

from types import ModuleType

from muxctl.commands import (
    attach,
    capture,
    doctor,
    install,
    kill,
    kill_if,
    ls,
    new,
    send,
    shell_integration,
    signal,
    snapshot,
    spawn,
    status,
    uninstall,
    upgrade,
)

COMMANDS: tuple[ModuleType, ...] = (
    status,
    ls,
    spawn,
    new,
    attach,
    kill,
    kill_if,
    signal,
    send,
    capture,
    snapshot,
    upgrade,
    install,
    uninstall,
    shell_integration,
    doctor,
)
