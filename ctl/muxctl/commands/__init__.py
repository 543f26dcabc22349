"""muxctl's verbs: one module each, exporting one declaration, `COMMAND`
(muxctl.commands.command says what a declaration holds).

The verbs are listed once, in `VERBS`, in the order `--help` shows them. A command
line loads only its own verb's module (`load`); `--help`, usage errors, the
completion script and the man page load them all (`all_commands`).
"""

import importlib

from muxctl.commands.command import LocalCommand, ServiceCommand

VERBS = (
    "status",
    "ls",
    "spawn",
    "split",
    "windows",
    "rename-window",
    "resize-pane",
    "title",
    "new",
    "attach",
    "kill",
    "kill-if",
    "signal",
    "send",
    "capture",
    "snapshot",
    "snapshots",
    "restore",
    "start",
    "forget-contents",
    "hosts",
    "web",
    "where",
    "upgrade",
    "stop",
    "install",
    "uninstall",
    "shell-integration",
    "doctor",
    "completion",
)


def load(verb: str) -> ServiceCommand | LocalCommand:
    """The declaration of `verb` (one of VERBS), from its module."""
    module = importlib.import_module(f"muxctl.commands.{verb.replace('-', '_')}")
    command: ServiceCommand | LocalCommand = module.COMMAND
    return command


def all_commands() -> tuple[ServiceCommand | LocalCommand, ...]:
    return tuple(load(verb) for verb in VERBS)
