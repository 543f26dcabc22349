"""muxctl shell-integration install|uninstall|print SHELL: mux's shell hooks in your rc files.

mux injects its integration into the shells it launches by itself; this is for
people who prefer it in their own startup files. See muxctl/shell_rc.py.
"""

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from muxctl.commands.command import LocalCommand
from muxctl.errors import EXIT_FAILURE, CtlError
from muxctl.output import print_json

if TYPE_CHECKING:
    from muxctl.shell_rc import Places

SHELLS = ("bash", "zsh", "fish", "nu")  # muxctl.shell_rc.SHELLS, without importing it for --help


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("install", "uninstall", "print"))
    parser.add_argument("shell", choices=SHELLS)


def run(args: argparse.Namespace) -> int:
    from muxctl import shell_rc

    if args.action == "print":
        sys.stdout.write(shell_rc.script_text(args.shell))
        return 0
    places = shell_rc.places(args.shell, dict(os.environ))
    try:
        changed, backup = (_install if args.action == "install" else _uninstall)(args.shell, places)
    except OSError as e:
        raise CtlError(
            f"could not {args.action} the {args.shell} integration: {e.strerror} ({e.filename})",
            EXIT_FAILURE,
        ) from None
    if args.json:
        print_json(
            {
                "shell": args.shell,
                "action": args.action,
                "changed": changed,
                "file": str(places.startup),
                "backup": str(backup) if backup else None,
            }
        )
    elif not changed:
        state = "installed" if args.action == "install" else "not installed"
        print(f"mux's {args.shell} integration is already {state} ({places.startup})")
    else:
        done = "installed in" if args.action == "install" else "removed from"
        print(f"mux's {args.shell} integration {done} {places.startup}")
        if backup:
            print(f"the previous version is kept as {backup}")
    return 0


def _install(shell: str, places: "Places") -> tuple[bool, Path | None]:
    from muxctl import shell_rc

    places.script.parent.mkdir(parents=True, exist_ok=True)
    script = shell_rc.script_text(shell)
    if not places.script.exists() or places.script.read_text() != script:
        places.script.write_text(script)
    if shell in ("fish", "nu"):  # a file of its own (conf.d; autoload: the script itself)
        text = script if shell == "nu" else shell_rc.block(shell, places.script)
        current = places.startup.read_text() if places.startup.exists() else None
        if current == text:
            return False, None
        return True, shell_rc.replace_file(places.startup, text)
    current = places.startup.read_text() if places.startup.exists() else ""
    wanted = shell_rc.with_block(current, shell, places.script)
    if wanted == current:
        return False, None
    return True, shell_rc.replace_file(places.startup, wanted)


def _uninstall(shell: str, places: "Places") -> tuple[bool, Path | None]:
    from muxctl import shell_rc

    places.script.unlink(missing_ok=True)
    if not places.startup.exists():
        return False, None
    if shell in ("fish", "nu"):  # the whole file is mux's
        backup = shell_rc.back_up(places.startup)
        places.startup.unlink()
        return True, backup
    current = places.startup.read_text()
    wanted = shell_rc.without_block(current)
    if wanted == current:
        return False, None
    return True, shell_rc.replace_file(places.startup, wanted)


COMMAND = LocalCommand(
    name="shell-integration",
    help="install, remove or print mux's shell integration for bash, zsh or fish",
    add_arguments=add_arguments,
    run=run,
)
