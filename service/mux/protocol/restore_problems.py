"""What `ListRestoreProblems` reports: a pane of the last session that was not started
again (or, with id 0, the whole session refused), and why."""

from dataclasses import dataclass


@dataclass(frozen=True)
class UnrestoredPane:
    pane_id: int  # the id it is kept under in the snapshot; 0: the whole session
    argv: tuple[str, ...]
    cwd: str
    title: str
    reason: str
