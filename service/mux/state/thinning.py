"""Which snapshots the history keeps: a pure function of the entries, the limits and the time.

By age (`now - time`, a time in the future counting as age 0): every entry younger
than `history_keep_all_seconds`; then, up to `history_hourly_seconds`, the newest of
each hour; then, up to `history_daily_seconds`, the newest of each day; older
entries go. Hours and days are counted in UTC (a day is 24 one-hour buckets, so the
two nest, and a change of time zone or daylight saving moves nothing). "The newest
of its hour" is judged against every entry, not only those of the same age tier:
that makes thinning again later, after entries were removed, keep exactly what one
thinning of every entry ever archived would keep.

Then the caps: `history_max_snapshots` entries and `history_max_bytes` bytes (a file
hard-linked into several entries counted once), the oldest removed first.

Two entries are never removed, whatever the age or the caps: the newest one, and
the newest one that has panes — so that snapshots of an empty session (a start with
nothing restored, every pane closed) never push the last real one out.

"Newer" is by generation: generations only grow, while clocks can be set back.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

FileKey = tuple[int, int]  # (device, inode): the same for every hard link of a file
HOUR = 3600
DAY = 24 * HOUR


class HistoryLimits(Protocol):
    """The settings the history obeys (mux.config.Settings has them under these names)."""

    @property
    def history_keep_all_seconds(self) -> float: ...
    @property
    def history_hourly_seconds(self) -> float: ...
    @property
    def history_daily_seconds(self) -> float: ...
    @property
    def history_max_snapshots(self) -> int: ...
    @property
    def history_max_bytes(self) -> int: ...


@dataclass(frozen=True)
class ThinningEntry:
    """One archived snapshot as the thinning sees it. `files`: a key per file on disk
    (device and inode: a hard link has the same key wherever it is) -> its bytes."""

    generation: int
    time: float
    has_panes: bool
    files: Mapping[FileKey, int] = field(default_factory=dict)


# Why an entry goes: in the log line that says it went.
OLDER_THAN_KEPT = "older than the history keeps"
NOT_NEWEST_OF_HOUR = "a newer snapshot of the same hour is kept"
NOT_NEWEST_OF_DAY = "a newer snapshot of the same day is kept"
PAST_COUNT = "past history_max_snapshots"
PAST_BYTES = "past history_max_bytes"


def protected(entries: Sequence[ThinningEntry]) -> set[int]:
    """The generations never removed: the newest entry, and the newest with panes."""
    newest_first = sorted(entries, key=lambda e: e.generation, reverse=True)
    kept = {newest_first[0].generation} if newest_first else set()
    with_panes = next((e for e in newest_first if e.has_panes), None)
    if with_panes is not None:
        kept.add(with_panes.generation)
    return kept


def to_remove(
    entries: Sequence[ThinningEntry], limits: HistoryLimits, now: float
) -> dict[int, str]:
    """The generations to remove, oldest first, each with why."""
    newest_first = sorted(entries, key=lambda e: e.generation, reverse=True)
    keep = protected(newest_first)
    removed: dict[int, str] = {}
    hours_seen: set[int] = set()  # of the entries newer than the one looked at
    days_seen: set[int] = set()
    survivors: list[ThinningEntry] = []
    for entry in newest_first:
        why = _age_verdict(entry, limits, now, hours_seen, days_seen)
        hours_seen.add(int(entry.time // HOUR))
        days_seen.add(int(entry.time // DAY))
        if why and entry.generation not in keep:
            removed[entry.generation] = why
        else:
            survivors.append(entry)

    removable = [e for e in reversed(survivors) if e.generation not in keep]  # oldest first
    excess = len(survivors) - limits.history_max_snapshots
    for entry in removable[: max(0, excess)]:
        removed[entry.generation] = PAST_COUNT
    removable = removable[max(0, excess) :]
    survivors = [e for e in survivors if e.generation not in removed]

    links = Counter(key for e in survivors for key in e.files)
    size = {key: bytes_ for e in survivors for key, bytes_ in e.files.items()}
    total = sum(size.values())
    for entry in removable:
        if total <= limits.history_max_bytes:
            break
        removed[entry.generation] = PAST_BYTES
        for key in entry.files:
            links[key] -= 1
            if links[key] == 0:
                total -= size[key]
    return dict(sorted(removed.items()))


def _age_verdict(
    entry: ThinningEntry,
    limits: HistoryLimits,
    now: float,
    hours_seen: set[int],
    days_seen: set[int],
) -> str:
    """Why `entry`'s age removes it, or "" when it is kept."""
    age = max(0.0, now - entry.time)
    if age < limits.history_keep_all_seconds:
        return ""
    if age < limits.history_hourly_seconds:
        return NOT_NEWEST_OF_HOUR if int(entry.time // HOUR) in hours_seen else ""
    if age < limits.history_daily_seconds:
        return NOT_NEWEST_OF_DAY if int(entry.time // DAY) in days_seen else ""
    return OLDER_THAN_KEPT


def history_bytes(entries: Sequence[ThinningEntry]) -> int:
    """The bytes the entries take together, each file (inode) counted once."""
    size = {key: bytes_ for e in entries for key, bytes_ in e.files.items()}
    return sum(size.values())
