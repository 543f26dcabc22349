"""muxctl's verbs: one module each, exporting one declaration, `COMMAND`
(muxctl.commands.command says what a declaration holds).

The verbs are listed once, in `COMMANDS`, in the order `--help` shows them.
"""

from muxctl.commands import (
    attach,
    capture,
    completion,
    doctor,
    hosts,
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
    stop,
    uninstall,
    upgrade,
    where,
)
from muxctl.commands.command import LocalCommand, ServiceCommand

COMMANDS: tuple[ServiceCommand | LocalCommand, ...] = (
    status.COMMAND,
    ls.COMMAND,
    spawn.COMMAND,
    new.COMMAND,
    attach.COMMAND,
    kill.COMMAND,
    kill_if.COMMAND,
    signal.COMMAND,
    send.COMMAND,
    capture.COMMAND,
    snapshot.COMMAND,
    hosts.COMMAND,
    where.COMMAND,
    upgrade.COMMAND,
    stop.COMMAND,
    install.COMMAND,
    uninstall.COMMAND,
    shell_integration.COMMAND,
    doctor.COMMAND,
    completion.COMMAND,
)
