"""One budget of emulator cells across all panes (the setting emulator_cells_budget).

A pane's screen costs memory in proportion to its rows times its columns (a
1000 x 2000 pane is some 47 MB of emulator), and any client may resize a pane,
so the sum over the panes is bounded: a Spawn, a split or a resize that would
take it past the budget is refused with `Unavailable`, naming the budget and
the setting. Shrinking is always allowed.

Every pane counts, whatever its state: one that has exited or holds a place
keeps its screen, and a hibernated screen (mux.terminal.screen) comes back at
its full size whenever it is looked at, so the sum is what the screens may
take at any moment, predictable from the panes' sizes alone. Panes that come
back in a restore or an upgrade are never refused (no pane is lost to the
budget) but count like any other: past the budget, only shrinking is allowed
until panes close.
"""

from collections.abc import Callable, Iterable
from typing import Protocol

from mux.protocol.errors import Unavailable


class Sized(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def rows(self) -> int: ...
    @property
    def cols(self) -> int: ...


class CellsBudget:
    def __init__(self, budget: int, panes: Callable[[], Iterable[Sized]]) -> None:
        """`panes`: every pane now (the table's)."""
        self.budget = budget
        self._panes = panes

    @property
    def in_use(self) -> int:
        return sum(pane.rows * pane.cols for pane in self._panes())

    def check_new(self, rows: int, cols: int) -> None:
        """Unavailable if a new pane of `rows` x `cols` would take the sum past the budget."""
        self._check(f"a new pane of {rows} rows and {cols} columns", rows * cols, 0)

    def check_resize(self, pane: Sized, rows: int, cols: int) -> None:
        """Unavailable if `pane` at `rows` x `cols` would take the sum past the budget."""
        what = f"resizing pane {pane.id} to {rows} rows and {cols} columns"
        self._check(what, rows * cols, pane.rows * pane.cols)

    def _check(self, what: str, wanted: int, freed: int) -> None:
        if wanted <= freed:
            return
        total = self.in_use - freed + wanted
        if total > self.budget:
            raise Unavailable(
                f"{what} would take the panes' screens to {total:,} cells, over the budget of "
                f"{self.budget:,} (the setting emulator_cells_budget); close or shrink a pane "
                "first"
            )
