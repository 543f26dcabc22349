"""A pane's working directory: observations, where each came from, and which one wins.

Three sources (docs/dbus-api.md#pane-objects): "launch" (the directory the program was
started in), "shell" (the shell's own report, OSC 7 or OSC 9;9) and "process"
(read from the process table: /proc/<pid>/cwd). A process capture is either a
child capture — the deepest descendant of the pane's program in the
terminal's foreground process group — or, when there is none, a root capture
of the program itself.

Precedence, from the nested-shell case (a shell without integration started
from an integrated one, then `cd` in it): the outer shell's last report is
stale, the child capture is right. So a newer child capture that disagrees
supersedes an older shell report, unless the shell said it is at its prompt; a
root capture never does (the root is the integrated shell itself, and it reports
for itself); a shell report always supersedes what came before it. A process
capture that finds the directory already known changes nothing (its source
included).
"""

import time
from dataclasses import dataclass, field

from mux.protocol.names import CwdSource


@dataclass(frozen=True)
class CwdObservation:
    path: str
    source: CwdSource
    captured_at: float = field(default_factory=time.time)
    child: bool = False  # a process capture of a descendant, not of the pane's program


def supersedes(
    new: CwdObservation, current: CwdObservation, *, shell_at_prompt: bool = False
) -> bool:
    """Whether `new` replaces `current` as the pane's working directory.
    `shell_at_prompt`: an integrated shell said it is at its prompt (and has not said
    since that a command runs)."""
    if new.source == "shell":
        return True
    if new.path == current.path:
        return False  # a process capture that only confirms changes nothing
    if new.source == "process":
        if current.source == "shell":
            # At the prompt the shell is what is in front: a child in its process group
            # then is its own background work (fish's first-run completion generator
            # runs for seconds in the shell's group, in the directory fish started in).
            return (
                new.child
                and not shell_at_prompt
                and new.captured_at > current.captured_at
                and new.path != current.path
            )
        return True
    return False  # "launch" is where a pane starts, never an update
