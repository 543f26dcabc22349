"""Every muxctl verb module keeps the contract `muxctl.commands` documents."""

import argparse
import inspect

from muxctl.commands import COMMANDS
from muxctl.main import build_parser

SPEC_VERBS = {
    "status",
    "ls",
    "spawn",
    "kill",
    "kill-if",
    "signal",
    "send",
    "capture",
    "snapshot",
    "upgrade",
    "install",
    "uninstall",
    "doctor",
}


def test_each_verb_module_has_its_entry_points() -> None:
    for command in COMMANDS:
        assert isinstance(command.NAME, str) and command.NAME
        assert isinstance(command.HELP, str) and command.HELP
        command.add_arguments(argparse.ArgumentParser())
        if hasattr(command, "run_local"):
            assert callable(command.run_local), command.NAME
        else:
            assert inspect.iscoroutinefunction(command.run), command.NAME
        if hasattr(command, "check"):
            assert callable(command.check)
    assert len({command.NAME for command in COMMANDS}) == len(COMMANDS)


def test_the_spec_verbs_of_this_version_are_there() -> None:
    assert {command.NAME for command in COMMANDS} >= SPEC_VERBS
    build_parser()  # every verb registers without clashes
