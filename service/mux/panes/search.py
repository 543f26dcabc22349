"""Finding panes by what a person remembers of them: the pane search behind GNOME
Shell's and KRunner's providers (docs/desktop.md#pane-search); no I/O.

Every term must be found, case-insensitively, in the pane's title, its running
command (an integrated shell's, else the program's argv) or its working
directory. A term found in the title or the command weighs more than one found
only in the directory; running panes come before exited ones.

A query is bounded (`search_query_max_bytes`, `search_query_max_terms`) before
anything is searched, so one search costs at most the terms times the panes'
text: a query of a million words is refused, not searched. Ids in strings are
ASCII digits only (`int()` alone would read U+0661, an Arabic-Indic one, as 1).
"""

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mux.panes.pane import Pane
from mux.protocol.errors import InvalidArgument
from mux.protocol.visible import visible

TITLE_WEIGHT, COMMAND_WEIGHT, CWD_WEIGHT = 3, 3, 1
MAX_RESULTS = 20
# Result ids a caller may hand back at once (GetResultMetas, a subsearch's previous
# results): more than a result set holds, far fewer than would cost anything.
MAX_IDS = 64
_PANE_ID = re.compile("[0-9]{1,19}")


@dataclass(frozen=True)
class QueryLimits:
    """The settings that bound one query."""

    max_bytes: int
    max_terms: int

    def query_terms(self, query: str) -> list[str]:
        """A typed query's terms (KRunner hands over the whole line), if within bounds."""
        self._check_bytes((query,))
        return self.checked_terms(query.split())

    def checked_terms(self, terms: Sequence[str]) -> list[str]:
        """`terms` (GNOME hands over a list), if within bounds; else InvalidArgument."""
        if len(terms) > self.max_terms:
            raise InvalidArgument(
                f"the search query has {len(terms)} terms; at most {self.max_terms}"
                " (search_query_max_terms)"
            )
        self._check_bytes(terms)
        return list(terms)

    def _check_bytes(self, terms: Sequence[str]) -> None:
        # A character is at least one byte: what is too long in characters is refused
        # before anything is encoded.
        chars = sum(len(term) for term in terms)
        if chars > self.max_bytes or sum(len(term.encode()) for term in terms) > self.max_bytes:
            raise InvalidArgument(
                f"the search query is longer than {self.max_bytes} bytes (search_query_max_bytes)"
            )


def checked_ids(identifiers: Sequence[str]) -> Sequence[str]:
    """Result ids handed back by a caller, if not too many; else InvalidArgument."""
    if len(identifiers) > MAX_IDS:
        raise InvalidArgument(f"{len(identifiers)} result ids in one call; at most {MAX_IDS}")
    return identifiers


def pane_id_of(identifier: str) -> int | None:
    """The pane a result id names: ASCII digits only, or None."""
    return int(identifier) if _PANE_ID.fullmatch(identifier) else None


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

    # What a desktop shows a person: a pane's program chose its title, command and
    # directory, so their control characters are shown as escapes (SPEC §12).
    @property
    def name(self) -> str:
        return f"Pane {self.pane_id}: {visible(self.title)}"

    @property
    def description(self) -> str:
        state = "" if self.running else " (exited)"
        return f"{visible(self.command)} — {visible(self.cwd)}{state}"


def search(panes: Iterable[PaneFacts], terms: Sequence[str]) -> list[PaneFacts]:
    """The panes every term matches, best first; none for no terms."""
    # Each distinct term once: the cost is terms x panes x their text, no more.
    wanted = list(dict.fromkeys(term.casefold() for term in terms if term.strip()))
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
