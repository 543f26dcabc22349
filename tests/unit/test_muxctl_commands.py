"""Every muxctl verb declares itself as `muxctl.commands.command` documents."""

import argparse
import inspect
import subprocess
import sys

import pytest

from muxctl.commands import all_commands
from muxctl.commands.command import LocalCommand, ServiceCommand
from muxctl.errors import CtlError
from muxctl.main import build_parser

# Verbs of the documented interface (docs/muxctl.md#verbs) that must never go away.
DOCUMENTED_VERBS = {
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


def test_each_verb_declares_its_entry_points() -> None:
    for command in all_commands():
        assert isinstance(command.name, str) and command.name
        assert isinstance(command.help, str) and command.help
        command.add_arguments(argparse.ArgumentParser())
        # Every verb runs without an event loop (attach has its own, inside).
        assert callable(command.run) and not inspect.iscoroutinefunction(command.run)
        assert isinstance(command, LocalCommand | ServiceCommand), command.name
        assert command.check is None or callable(command.check)
    assert len({command.name for command in all_commands()}) == len(all_commands())


def test_the_documented_verbs_are_there() -> None:
    assert {command.name for command in all_commands()} >= DOCUMENTED_VERBS
    build_parser()  # every verb registers without clashes


def test_declaring_the_verbs_loads_neither_asyncio_nor_dbus() -> None:
    # `muxctl --help` and usage errors import every verb module: what is heavy stays
    # inside the functions that use it. A fresh interpreter, since this one has both.
    probe = (
        "import sys; from muxctl.main import build_parser; build_parser(); "
        "print(sorted({'asyncio', 'dbus_fast'} & {m.split('.')[0] for m in sys.modules}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


def _checked(verb: str, *words: str) -> argparse.Namespace:
    """`muxctl VERB WORDS…` parsed and checked as main does."""
    argv = [verb, *words]
    args = build_parser(verb).parse_args(argv)
    args.words = argv
    args.command_entry.check(args)
    return args


def _split(*words: str) -> argparse.Namespace:
    return _checked("split", *words)


def test_split_takes_its_options_around_the_pane_id_and_the_program_after_dashes() -> None:
    args = _split("3", "--horizontal", "--ratio", "0.3", "--", "sleep", "1")
    assert (args.direction, args.ratio, args.command) == ("horizontal", 0.3, ["sleep", "1"])
    assert _split("--horizontal", "3", "--", "top").command == ["top"]
    assert _split("3", "--horizontal").command == []
    # A program whose name starts with a dash is the program, not an option.
    args = _split("3", "--", "-weird", "--flag")
    assert (args.direction, args.command) == ("vertical", ["-weird", "--flag"])
    args = _split("3", "--horizontal", "--", "-weird")
    assert (args.direction, args.command) == ("horizontal", ["-weird"])


def _send(*words: str) -> argparse.Namespace:
    return _checked("send", *words)


def test_send_takes_enter_before_or_after_the_text_and_a_dashed_text_after_dashes() -> None:
    for words in (("3", "--enter", "ls"), ("3", "ls", "--enter"), ("--enter", "3", "ls")):
        assert _send(*words).data == b"ls\r", words
    assert _send("3", "ls").data == b"ls"
    assert _send("3", "--", "-h").data == b"-h"
    assert _send("3", "--enter", "--", "--help").data == b"--help\r"
    with pytest.raises(CtlError, match="one TEXT"):
        _send("3", "a", "--", "b")
    with pytest.raises(CtlError, match="either TEXT or --stdin"):
        _send("3", "--enter")
