"""What a pane launched, and the one place its fields become record fields.

The handover across an upgrade (`mux.panes.handover.PaneRecord`) and the session
snapshot (`mux.state.schema.PaneSnapshot`, docs/resurrection-protocol.md) both
carry a launch as flat fields of their own records; both formats stay as they
are, and both are written and read through `Launch` here.
"""

import secrets
import time
from dataclasses import dataclass, field
from typing import Protocol, TypedDict

from mux.protocol.spawn_options import LaunchKind


class HandedOverLaunch(TypedDict):
    """A launch's fields in the handover record."""

    kind: LaunchKind
    argv: list[str]
    program: str
    env_overrides: list[tuple[str, str]]
    invocation: str
    started_at: float


class SavedLaunch(TypedDict):
    """A launch's fields in the session snapshot (no start time: a restore is a new one)."""

    kind: LaunchKind
    argv: list[str]
    program: str
    env_overrides: dict[str, str]
    invocation: str


class LaunchFields(Protocol):
    """A record that carries a handed-over launch (PaneRecord)."""

    @property
    def kind(self) -> LaunchKind: ...
    @property
    def argv(self) -> list[str]: ...
    @property
    def program(self) -> str: ...
    @property
    def env_overrides(self) -> list[tuple[str, str]]: ...
    @property
    def invocation(self) -> str: ...
    @property
    def started_at(self) -> float: ...


class SavedLaunchFields(Protocol):
    """A record that carries a saved launch (PaneSnapshot)."""

    @property
    def kind(self) -> LaunchKind: ...
    @property
    def argv(self) -> list[str]: ...
    @property
    def program(self) -> str | None: ...  # None: it could not be resolved
    @property
    def env_overrides(self) -> dict[str, str]: ...
    @property
    def invocation(self) -> str: ...


@dataclass(frozen=True)
class Launch:
    """What was started, as the client asked for it and as it was resolved."""

    kind: LaunchKind
    argv: tuple[str, ...]
    program: str  # absolute path of the executable
    env_overrides: tuple[tuple[str, str], ...]
    # Opaque identity of this launch: what application-resurrection checkpoints key on.
    invocation: str = field(default_factory=lambda: secrets.token_hex(16))
    started_at: float = field(default_factory=time.time)

    def handover_fields(self) -> HandedOverLaunch:
        return HandedOverLaunch(
            kind=self.kind,
            argv=list(self.argv),
            program=self.program,
            env_overrides=list(self.env_overrides),
            invocation=self.invocation,
            started_at=self.started_at,
        )

    @classmethod
    def handed_over(cls, record: LaunchFields) -> "Launch":
        return cls(
            kind=record.kind,
            argv=tuple(record.argv),
            program=record.program,
            env_overrides=tuple(record.env_overrides),
            invocation=record.invocation,
            started_at=record.started_at,
        )

    @classmethod
    def saved(cls, record: SavedLaunchFields) -> "Launch":
        """The launch a snapshot kept (a pane not restored shows it: mux.panes.placeholder)."""
        return cls(
            kind=record.kind,
            argv=tuple(record.argv),
            program=record.program or "",
            env_overrides=tuple(record.env_overrides.items()),
            invocation=record.invocation,
        )

    def snapshot_fields(self) -> SavedLaunch:
        return SavedLaunch(
            kind=self.kind,
            argv=list(self.argv),
            program=self.program,
            env_overrides=dict(self.env_overrides),
            invocation=self.invocation,
        )
