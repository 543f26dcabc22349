"""Typing a checkpointed command again into a restored shell (application-resurrection/1).

When a snapshot is taken while a shell pane's foreground application holds a
checkpoint, the snapshot records that command line (from the shell's own,
tokened OSC 133 C marker; never from a client's message). At restore the shell
is relaunched and, at its first prompt, the command is typed into it; the
relaunched application then says hello and gets its reference back. The offer
survives that first prompt and the replayed command's own marker; any later
prompt or command marker means the user has moved on: the offer is withdrawn
and earlier registrations are dropped, so a later manual launch gets
`restore: null`.

Only checkpointed commands are replayed, plus those whose program is in the
`replay_commands` allowlist (as tmux-resurrect does) — never anything else. The
snapshot records the command whatever its program, and the restore decides with
the allowlist of the settings then: a program added to it before a stop is
replayed at the next start.
"""

import os
import shlex
from collections.abc import Iterable
from enum import Enum, auto


class Step(Enum):
    TYPE = auto()  # type the command now
    WITHDRAW = auto()  # withdraw the offer: the user moved on


class _Phase(Enum):
    WAITING = auto()  # for the relaunched shell's first prompt
    TYPED = auto()  # typed, waiting for its own command marker
    RUNNING = auto()  # the replayed command runs


class CommandReplay:
    def __init__(self, command: str, checkpoint_generation: int | None) -> None:
        self.command = command
        self.checkpoint_generation = checkpoint_generation  # what the snapshot referenced
        self._phase = _Phase.WAITING

    @property
    def phase(self) -> str:
        """For the handover across an upgrade."""
        return self._phase.name

    @classmethod
    def resumed(
        cls, command: str, checkpoint_generation: int | None, phase: str
    ) -> "CommandReplay":
        replay = cls(command, checkpoint_generation)
        replay._phase = _Phase[phase]
        return replay

    @property
    def pending(self) -> bool:
        """Not yet running: a snapshot taken now must keep the replay as it was."""
        return self._phase is not _Phase.RUNNING

    def marker(self, kind: str) -> Step | None:
        """The shell printed a (tokened) marker: what to do."""
        if kind == "A":
            if self._phase is _Phase.WAITING:
                self._phase = _Phase.TYPED
                return Step.TYPE
            return Step.WITHDRAW  # a later prompt
        if kind == "C":
            if self._phase is _Phase.TYPED:
                self._phase = _Phase.RUNNING  # the replay's own marker
                return None
            return Step.WITHDRAW  # a later command
        return None


def replayable(command: str | None, checkpointed: bool, allowlist: Iterable[str] | None) -> bool:
    """Whether a shell's running command may be typed again at restore (`allowlist` None:
    whatever its program, when a snapshot records it for the restore to decide)."""
    if not command or "\n" in command or "\r" in command:
        return False
    if checkpointed or allowlist is None:
        return True
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return bool(words) and os.path.basename(words[0]) in set(allowlist)
