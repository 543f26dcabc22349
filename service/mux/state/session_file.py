"""Reading and writing `<state>/session.json`, durably; a bad file is quarantined, not used."""

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mux.state.schema import Session, SnapshotError, migrate
from mux.system.durable import durable_write
from mux.system.quarantine import quarantine


class SnapshotRefused(Exception):
    """The file is not a snapshot this mux can use; it was moved to the quarantine."""

    def __init__(self, reason: str, quarantined_as: Path) -> None:
        super().__init__(f"the session snapshot was not used: {reason}")
        self.reason = reason
        self.quarantined_as = quarantined_as


def _first_problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def parse_session(raw: bytes) -> Session:
    """The snapshot in `raw`, migrated to the current version; SnapshotError otherwise."""
    try:
        data: Any = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SnapshotError(f"it is not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise SnapshotError("it is not a JSON object")
    data = migrate(data)
    try:
        return Session.model_validate(data)
    except ValidationError as e:
        raise SnapshotError(_first_problem(e)) from None


def read_session(path: Path, quarantine_dir: Path) -> Session | None:
    """None when there is no snapshot; SnapshotRefused (file quarantined) when it is bad."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return parse_session(raw)
    except SnapshotError as e:
        moved = quarantine(path, quarantine_dir, str(e))
        raise SnapshotRefused(str(e), moved) from None


def session_bytes(session: Session) -> bytes:
    """The file's content: the one way a session is written (session.json, the autosaver's
    snapshots, session.previous.json), indented so that a person can read and diff it."""
    return session.model_dump_json(indent=1).encode() + b"\n"


def write_session(path: Path, session: Session) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    durable_write(path, session_bytes(session))
