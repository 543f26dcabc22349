"""What Tab offers for muxctl's arguments that name live things (pane ids, hosts).

shtab generates the completion script from the parser (muxctl completion); this
module declares, without importing shtab (it is loaded only to print the script),
the shell functions the script carries and which arguments use them. Each function
asks the running service (`muxctl --no-start ...`: pressing Tab never starts muxd)
and prints the first column of the table without its header; nothing when mux is
not running, since errors go to /dev/null.
"""

import argparse

# No `$` in it: fish would expand it inside the double quotes shtab puts it in.
_LIST = "command muxctl --no-start {verb} 2>/dev/null | tail -n +2 | cut -d ' ' -f 1"
_SOURCES = (("pane_ids", "ls"), ("hosts", "hosts"))

# shtab's `preamble`: the functions, per shell (fish runs the command in place).
PREAMBLE = {
    "bash": "\n".join(
        f'_muxctl_{kind}() {{ compgen -W "$({_LIST.format(verb=verb)})" -- "$1"; }}'
        for kind, verb in _SOURCES
    ),
    "zsh": "\n".join(
        f'_muxctl_{kind}() {{ compadd -- ${{(f)"$({_LIST.format(verb=verb)})"}} }}'
        for kind, verb in _SOURCES
    ),
    "fish": "",
}


def _choices(kind: str, verb: str) -> dict[str, str]:
    return {
        "bash": f"_muxctl_{kind}",
        "zsh": f"_muxctl_{kind}",
        "fish": f"({_LIST.format(verb=verb)})",
    }


PANE_IDS, HOSTS = (_choices(kind, verb) for kind, verb in _SOURCES)


def complete_with(action: argparse.Action, choices: dict[str, str]) -> None:
    """Mark an argument for shtab (it reads the attribute `complete`)."""
    action.complete = choices  # type: ignore[attr-defined]
