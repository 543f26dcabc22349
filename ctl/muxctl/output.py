"""Printing results: a table or lines for people, JSON with --json."""

import sys
from collections.abc import Iterable, Sequence
from typing import Any


def print_json(value: Any) -> None:
    import json  # with --json only: a table costs no JSON encoder (~1.5 ms)

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
