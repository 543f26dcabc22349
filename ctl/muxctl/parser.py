"""muxctl's argparse parsers, whose help finds the terminal's width without shutil.

argparse's HelpFormatter asks shutil.get_terminal_size for it, and argparse makes a
formatter for every add_argument (to check the metavar): shutil, with zlib, bz2
and lzma, would cost every muxctl call ~2 ms. `columns` answers what shutil would.
"""

import argparse
import os
import sys
from typing import Any


def columns() -> int:
    """shutil.get_terminal_size().columns: $COLUMNS, else stdout's terminal's, else 80."""
    try:
        width = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        width = 0
    if width > 0:
        return width
    stdout = sys.__stdout__
    if stdout is None:
        return 80
    try:
        return os.get_terminal_size(stdout.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):  # closed, detached, not a terminal
        return 80


class HelpFormatter(argparse.HelpFormatter):
    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = columns() - 2 if width is None else width  # as argparse's own
        super().__init__(prog, indent_increment, max_help_position, width)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser with that formatter by default; its sub-parsers are Parsers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
