"""The command lines that run muxd (and muxctl) with this installation's interpreter.

One definition for every place that starts muxd: muxctl starting it in the
background (docs/muxctl.md#starting-the-service), the units and launch agent
`muxctl install` writes (docs/systemd.md#installing) and the graceful upgrade's
re-execution (docs/systemd.md#graceful-upgrade).
"""

import sys

MUXD_MODULE = "mux"
MUXCTL_MODULE = "muxctl"


def python_module_argv(module: str) -> list[str]:
    """`<python> -P -m <module>`, with the interpreter running now.

    sys.executable as it is, not resolved: a venv's python is a symlink to the
    base interpreter, which would not see the venv's packages; and a running
    interpreter's sys.executable is never a shim (a pyenv shim adds ~80 ms to
    every start and may pick another Python). -P: never import from the
    working directory, whatever it holds (a unit's is $HOME).
    """
    return [sys.executable, "-P", "-m", module]


def muxd_argv() -> list[str]:
    """The command line of muxd, without options."""
    return python_module_argv(MUXD_MODULE)


def muxctl_argv() -> list[str]:
    """The command line of muxctl, without options or verb."""
    return python_module_argv(MUXCTL_MODULE)
