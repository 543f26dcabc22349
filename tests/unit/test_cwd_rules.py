"""Which working-directory observation wins, and which process a capture reads."""

from __future__ import annotations

import pytest

from mux.panes.cwd import CwdObservation, supersedes
from mux.system.proctree import ProcessInfo, ProcessTree

SHELL = CwdObservation("/a", "shell", captured_at=100.0)


@pytest.mark.parametrize(
    ("new", "current", "wins"),
    [
        # A shell report wins over anything before it.
        (CwdObservation("/b", "shell", 200.0), CwdObservation("/a", "launch", 1.0), True),
        (CwdObservation("/b", "shell", 200.0), CwdObservation("/a", "process", 150.0), True),
        # A newer child capture that disagrees supersedes an older shell report...
        (CwdObservation("/b", "process", 200.0, child=True), SHELL, True),
        # ...an older one does not, nor one that agrees,
        (CwdObservation("/b", "process", 50.0, child=True), SHELL, False),
        (CwdObservation("/a", "process", 200.0, child=True), SHELL, False),
        # and a root capture never does.
        (CwdObservation("/b", "process", 200.0, child=False), SHELL, False),
        # Over a launch directory or an earlier capture, any capture that differs wins.
        (CwdObservation("/b", "process", 200.0), CwdObservation("/a", "launch", 1.0), True),
        (CwdObservation("/b", "process", 200.0), CwdObservation("/a", "process", 150.0), True),
        (CwdObservation("/a", "process", 200.0), CwdObservation("/a", "launch", 1.0), False),
        # "launch" is never an update.
        (CwdObservation("/b", "launch", 200.0), CwdObservation("/a", "process", 1.0), False),
    ],
)
def test_precedence(new: CwdObservation, current: CwdObservation, wins: bool) -> None:
    assert supersedes(new, current) is wins


def test_at_the_prompt_a_child_capture_does_not_override_the_shell() -> None:
    # fish's first-run completion generator: a child in the shell's own group, for
    # seconds, in the directory fish started in, while the shell sits at its prompt.
    newer_child = CwdObservation("/b", "process", 200.0, child=True)
    assert supersedes(newer_child, SHELL, shell_at_prompt=True) is False
    assert supersedes(newer_child, SHELL, shell_at_prompt=False) is True
    # Over anything but a shell report, the prompt does not matter.
    launch = CwdObservation("/a", "launch", 1.0)
    assert supersedes(newer_child, launch, shell_at_prompt=True) is True


def test_deepest_in_the_foreground_group() -> None:
    # 10 (shell, group 10) -> 11 (make, group 11) -> 12 (cc, group 11) -> 13 (as, group 11)
    #                      -> 20 (a background job, group 20) -> 21 (group 20, deeper)
    tree = ProcessTree(
        {
            10: ProcessInfo(ppid=1, pgrp=10),
            11: ProcessInfo(ppid=10, pgrp=11),
            12: ProcessInfo(ppid=11, pgrp=11),
            13: ProcessInfo(ppid=12, pgrp=11),
            20: ProcessInfo(ppid=10, pgrp=20),
            21: ProcessInfo(ppid=20, pgrp=20),
            30: ProcessInfo(ppid=1, pgrp=11),  # same group number, not a descendant
        }
    )
    assert tree.deepest_in_group(10, 11) == 13
    assert tree.deepest_in_group(10, 10) == 10  # at the prompt: the shell itself
    assert tree.deepest_in_group(10, 99) is None
    assert tree.deepest_in_group(77, 11) is None  # gone


def test_the_real_process_table_holds_this_process() -> None:
    import os

    tree = ProcessTree.read()
    assert tree is not None
    assert tree.processes[os.getpid()].ppid == os.getppid()
    assert tree.processes[os.getpid()].pgrp == os.getpgrp()
