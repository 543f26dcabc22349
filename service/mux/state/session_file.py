"""Reading and writing `<state>/session.json`, durably; a bad file is quarantined, not used."""

from pathlib import Path

from pydantic import ValidationError

from mux.state.schema import MAX_GENERATION, Session, SnapshotError, migrate
from mux.system.durable import durable_write
from mux.system.json_file import (
    MIB,
    JsonFileKind,
    MalformedJson,
    parse_json_object,
    read_json_object,
)
from mux.system.quarantine import quarantine

# 64 MiB: some 100,000 panes of about 600 bytes each, far past any real session. The
# snapshot's tables nest 6 levels.
SESSION_FILE = JsonFileKind("the session snapshot", 64 * MIB, max_depth=16)


class SnapshotRefused(Exception):
    """The file is not a snapshot this mux can use; it was moved to the quarantine."""

    def __init__(self, reason: str, quarantined_as: Path, generation: int = 0) -> None:
        """`generation`: the one the refused file claims, if it has one (generations
        only grow, even past a refused file); 0 otherwise."""
        super().__init__(f"the session snapshot was not used: {reason}")
        self.reason = reason
        self.quarantined_as = quarantined_as
        self.generation = generation


def _first_problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def parse_session(raw: bytes) -> Session:
    """The snapshot in `raw`, migrated to the current version; SnapshotError otherwise."""
    try:
        data = parse_json_object(raw, SESSION_FILE)
    except MalformedJson as e:
        raise SnapshotError(e.problem) from None
    return _session_of(data)


def _session_of(data: dict[str, object]) -> Session:
    data = migrate(data)
    try:
        return Session.model_validate(data)
    except ValidationError as e:
        raise SnapshotError(_first_problem(e)) from None


def read_session(path: Path, quarantine_dir: Path) -> Session | None:
    """None when there is no snapshot; SnapshotRefused (file quarantined) when it is bad;
    OSError when it cannot be read."""
    data: dict[str, object] = {}
    try:
        data = read_json_object(path, SESSION_FILE)
        return _session_of(data)
    except FileNotFoundError:
        return None
    except (MalformedJson, SnapshotError) as e:
        reason = e.problem if isinstance(e, MalformedJson) else str(e)
        moved = quarantine(path, quarantine_dir, reason)
        raise SnapshotRefused(reason, moved, _claimed_generation(data)) from None


def _claimed_generation(data: dict[str, object]) -> int:
    value = data.get("generation", 0)
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return value if 0 <= value <= MAX_GENERATION else 0


def session_bytes(session: Session) -> bytes:
    """The file's content: the one way a session is written (session.json, the autosaver's
    snapshots, session.previous.json), indented so that a person can read and diff it."""
    return session.model_dump_json(indent=1).encode() + b"\n"


def write_session(path: Path, session: Session) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    durable_write(path, session_bytes(session))
