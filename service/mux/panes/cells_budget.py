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

The sum is kept as a running total, updated as panes come, go and change
size, so a check costs the same with 10 panes or 10,000 (a sum over the
panes at every Spawn made spawning quadratic at scale).
"""

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
    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._cells: dict[int, int] = {}  # pane id: its rows x cols, as last counted
        self._in_use = 0

    @property
    def in_use(self) -> int:
        """The cells of every pane counted and not forgotten."""
        return self._in_use

    def count(self, pane: Sized) -> None:
        """`pane` is in the table at its current size (new, or resized since)."""
        cells = pane.rows * pane.cols
        self._in_use += cells - self._cells.get(pane.id, 0)
        self._cells[pane.id] = cells

    def forget(self, pane_id: int) -> None:
        """The pane has left the table."""
        self._in_use -= self._cells.pop(pane_id, 0)

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
