"""Finding panes by what a person remembers of them: the pane search behind GNOME
Shell's and KRunner's providers (docs/desktop.md#pane-search); no I/O.

Every term must be found, case-insensitively, in the pane's title, its running
command (an integrated shell's, else the program's argv) or its working
directory. A term found in the title or the command weighs more than one found
only in the directory; running panes come before exited ones.
"""

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mux.panes.pane import Pane

TITLE_WEIGHT, COMMAND_WEIGHT, CWD_WEIGHT = 3, 3, 1
MAX_RESULTS = 20


@dataclass(frozen=True)
class PaneFacts:
    """What a search looks at, and what its results show."""

    pane_id: int
    title: str
    command: str
    cwd: str
    running: bool

    @classmethod
    def of(cls, pane: Pane) -> "PaneFacts":
        shell_command = pane.last_command if pane.shell_state == "command" else None
        command = shell_command or shlex.join(pane.argv)
        return cls(pane.id, pane.title, command, pane.cwd, pane.is_running)

    @property
    def name(self) -> str:
        return f"Pane {self.pane_id}: {self.title}"

    @property
    def description(self) -> str:
        state = "" if self.running else " (exited)"
        return f"{self.command} — {self.cwd}{state}"


def terms_of(query: str) -> list[str]:
    """A typed query's terms (KRunner hands over the whole line)."""
    return [term for term in query.split() if term]


def search(panes: Iterable[PaneFacts], terms: Sequence[str]) -> list[PaneFacts]:
    """The panes every term matches, best first; none for no terms."""
    wanted = [term.casefold() for term in terms if term.strip()]
    if not wanted:
        return []
    scored = []
    for facts in panes:
        score = _score(facts, wanted)
        if score:
            scored.append((not facts.running, -score, facts.pane_id, facts))
    scored.sort(key=lambda entry: entry[:3])
    return [entry[3] for entry in scored[:MAX_RESULTS]]


def _score(facts: PaneFacts, terms: Sequence[str]) -> int:
    fields = (
        (facts.title.casefold(), TITLE_WEIGHT),
        (facts.command.casefold(), COMMAND_WEIGHT),
        (facts.cwd.casefold(), CWD_WEIGHT),
    )
    total = 0
    for term in terms:
        weight = max((w for text, w in fields if term in text), default=0)
        if not weight:
            return 0
        total += weight
    return total
