"""Checkpoints: the opaque reference an application hands mux, one file per invocation.

`<state>/checkpoints/<invocation>.json`, written through the durable writer
(file and directory fsynced before the application is told), keyed by the
invocation identity of the launch (the same across a restore, since the
relaunched program continues that invocation). mux never interprets the
reference. A file that is unreadable, of an unknown format, or about another
invocation is a `CheckpointProblem`: the caller reports it; the file is left
untouched.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path

from mux.system.durable import REAL_OPS, FileOps, durable_remove, durable_write

FORMAT = 1
_INVOCATION = re.compile(r"[0-9a-f]{32}")


class CheckpointProblem(Exception):
    """A checkpoint that cannot be given back; the message says why, without paths."""


@dataclass(frozen=True)
class CheckpointRecord:
    invocation: str
    application: str
    reference: str
    generation: int


class CheckpointStore:
    def __init__(self, directory: Path, ops: FileOps = REAL_OPS) -> None:
        """`ops`: the system calls of durable writes (replaced in fault-injection tests)."""
        self.directory = directory
        self._ops = ops

    def path_for(self, invocation: str) -> Path:
        if not _INVOCATION.fullmatch(invocation):
            raise CheckpointProblem("the launch has no valid invocation identity")
        return self.directory / f"{invocation}.json"

    def write(self, invocation: str, application: str, reference: str) -> int:
        """Durably on disk when it returns (blocking: run it off the event loop)."""
        path = self.path_for(invocation)
        try:
            generation = self.read(invocation).generation + 1
        except (CheckpointProblem, FileNotFoundError):
            generation = 1
        record = {
            "format": FORMAT,
            "invocation": invocation,
            "application": application,
            "reference": reference,
            "generation": generation,
        }
        durable_write(path, json.dumps(record).encode() + b"\n", ops=self._ops)
        return generation

    def clear(self, invocation: str) -> None:
        durable_remove(self.path_for(invocation), ops=self._ops)

    def read(self, invocation: str) -> CheckpointRecord:
        """FileNotFoundError when there is none; CheckpointProblem when it is unusable."""
        path = self.path_for(invocation)
        data = path.read_bytes()
        try:
            value = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise CheckpointProblem("the checkpoint file is corrupt (not JSON)") from None
        if not isinstance(value, dict) or value.get("format") != FORMAT:
            raise CheckpointProblem("the checkpoint file has a format this mux does not know")
        record = CheckpointRecord(
            invocation=value.get("invocation"),  # type: ignore[arg-type]
            application=value.get("application"),  # type: ignore[arg-type]
            reference=value.get("reference"),  # type: ignore[arg-type]
            generation=value.get("generation"),  # type: ignore[arg-type]
        )
        if not (
            isinstance(record.application, str)
            and isinstance(record.reference, str)
            and isinstance(record.generation, int)
        ):
            raise CheckpointProblem("the checkpoint file is corrupt (missing fields)")
        if record.invocation != invocation:
            raise CheckpointProblem("the checkpoint file belongs to another invocation")
        return record
