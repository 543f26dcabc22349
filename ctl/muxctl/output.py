"""Printing results: a table or lines for people, JSON with --json.

What muxctl prints for a person may hold text from a pane (titles, directories, the
screen), from another client (window titles) or from a satellite and its ssh
(`last_error`): a terminal would obey the controls in it (SPEC §12). So muxctl's
standard output and error are `PersonStream`s while a verb runs (muxctl.main): every
C0 (but newline and tab), DEL, C1 and bidi control written to them comes out as a
visible escape (`\\x1b`, `\\u202e`), whichever verb printed it, new verbs included.
JSON is ASCII (`\\u001b`), so `--json` keeps every string exact. Only `exact_stdout`
writes text as it is (`capture --raw`).
"""

import io
import sys
from collections.abc import Iterable, Sequence
from typing import Any, TextIO, cast

from mux.protocol.visible import visible, visible_lines


class PersonStream(io.TextIOBase):
    """A text stream for a person: what is written to it reaches `exact` with every
    control character escaped (newlines and tabs kept)."""

    def __init__(self, exact: TextIO) -> None:
        super().__init__()
        self.exact = exact

    def write(self, text: str) -> int:
        self.exact.write(visible_lines(text))
        return len(text)

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        self.exact.flush()

    def fileno(self) -> int:
        return self.exact.fileno()

    def isatty(self) -> bool:
        return self.exact.isatty()


def for_a_person(exact: TextIO) -> TextIO:
    """`exact` as a `PersonStream` (what print and argparse take as a text file)."""
    return cast(TextIO, PersonStream(exact))


def exact_stdout() -> TextIO:
    """Standard output without the escaping: for text a person asked to get as it is."""
    stream = sys.stdout
    return stream.exact if isinstance(stream, PersonStream) else stream


def print_json(value: Any) -> None:
    import json  # with --json only: a table costs no JSON encoder (~1.5 ms)

    # ASCII (ensure_ascii): every control is a \\u escape, and the strings stay exact.
    json.dump(value, sys.stdout, indent=None, separators=(",", ":"), sort_keys=True)
    sys.stdout.write("\n")


def print_json_or_lines(as_json: bool, value: Any, lines: Iterable[str]) -> None:
    """`value` as JSON with --json, else `lines` for people."""
    if as_json:
        print_json(value)
    else:
        for line in lines:
            print(line)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    # Escaped before measuring (a cell stays on its line, and the columns line up as
    # printed); printing escapes it no further.
    rows = [[visible(cell) for cell in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row[:-1]):
            widths[i] = max(widths[i], len(cell))
    for row in (headers, *rows):
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        print("  ".join([*cells, row[-1]]).rstrip())


def unwrap(entry: dict[str, Any]) -> dict[str, Any]:
    """`a{sv}` from the bus -> plain values."""
    return {key: getattr(value, "value", value) for key, value in entry.items()}
