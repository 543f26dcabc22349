"""Pane contents across cold restarts (docs/contents.md, SPEC §13): saved, sealed, shown.

Every `contents_save_seconds`, each running pane whose output changed since its last
save has its history and screen made into text and colours
(mux.terminal.saved_contents), sealed with the contents key and written to
`<state>/contents/<invocation>` (mux.state.contents_store): read on the event loop
(a copy of the ring and the screen's dump, ~0.1 ms a pane), made and written on a
worker thread, one pane at a time so the loop runs between them. The same happens
before every `Snapshot` (the sleep guard's too) and, within a deadline, before the
final snapshot at stop. `restore_scrollback_lines = 0` saves nothing.

The key comes from the Secret Service, else a 0600 file (mux.system.contents_key),
looked up on a worker thread; a start waits for it at most `KEY_WAIT_SECONDS`. A
keyring still locked (or slow) never delays a restore: the panes start at once, and
their old contents are shown when the key comes, above nothing of theirs being
overwritten meanwhile. Without a key nothing is written: never plain text.

Past `contents_max_bytes` on disk, the least recently used panes' files go first
(logged). Files of panes no longer in the session go after each save.
"""

import asyncio
import contextlib
import logging
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import cast

from mux.config import Settings
from mux.panes.pane import Pane
from mux.panes.table import PaneTable
from mux.protocol.restore_problems import UnrestoredPane
from mux.state.contents_store import ContentsProblem, ContentsStore
from mux.state.schema import PaneSnapshot
from mux.system.contents_key import Forgotten, KeyFound, KeyLookup, find_key, forget
from mux.system.paths import Paths
from mux.system.worker_threads import off_the_loop
from mux.terminal.saved_contents import contents_of, last_lines

log = logging.getLogger(__name__)

KEY_WAIT_SECONDS = 1.0  # the longest a start waits for the key before restoring
FINAL_SAVE_SECONDS = 5.0  # the longest a stop (or a Snapshot) spends saving contents
# While contents are made on the worker (pure Python, holding the GIL), the loop gets
# the GIL back within this long rather than the default 5 ms: a keystroke's echo waited
# up to two intervals (bench/contents_load.py: echo p50 0.9 -> 11 ms during saves).
SAVING_SWITCH_INTERVAL = 0.0005
# One pane's contents, however long its lines: 2000 lines of 200 columns with colours.
MAX_PANE_CONTENTS_BYTES = 8 << 20
MAX_PEEK_BYTES = 64 << 10  # of a pane's contents in a dry run's answer: a screenful
READ_AHEAD_THREADS = 2  # (a laptop has two cores at least)
READ_AHEAD_PANES = 16  # contents read before the restore takes them, at most


class ContentsKeeper:
    def __init__(
        self,
        settings: Settings,
        paths: Paths,
        table: PaneTable,
        loop: asyncio.AbstractEventLoop,
        bus_address: str | None,
    ) -> None:
        self._settings = settings
        self._state = paths.state
        self.store = ContentsStore(paths.state / "contents")
        self._table = table
        self._loop = loop
        self._bus_address = bus_address
        self.enabled = settings.restore_scrollback_lines > 0
        self._key: bytes | None = None
        self._lookup: asyncio.Future[KeyLookup] | None = None
        self._saved_totals: dict[str, int] = {}  # invocation: output total at its save
        self._not_shown: dict[str, Callable[[bytes], None]] = {}  # waiting for the key
        self.problems: list[UnrestoredPane] = []  # contents that could not be used
        self._timer: asyncio.TimerHandle | None = None
        self._saving: asyncio.Lock = asyncio.Lock()
        self._ahead: dict[str, Future[bytes]] = {}  # invocation: its contents being read
        self._to_read: deque[str] = deque()  # the restore's, not being read yet
        self._reader: ThreadPoolExecutor | None = None

    # -- the key -----------------------------------------------------------------

    async def find_key(self, wait: float = KEY_WAIT_SECONDS) -> None:
        """Look the key up (made if missing); wait for it at most `wait` seconds (then it
        is taken when it comes)."""
        if not self.enabled or self._lookup is not None:
            return
        lookup = self._loop.run_in_executor(
            None,
            lambda: find_key(self._state, create=True, bus_address=self._bus_address),
        )
        self._lookup = lookup
        lookup.add_done_callback(self._key_looked_up)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(lookup), wait)

    def _key_looked_up(self, lookup: "asyncio.Future[KeyLookup]") -> None:
        self._lookup = None
        try:
            found = lookup.result()
        except Exception as e:  # a keyring that fails in an unforeseen way: no contents
            log.error("the contents key could not be looked up: %s", e)
            return
        if isinstance(found, KeyFound):
            self._key = found.key
            log.info("the contents key is in the %s", found.store)
            for invocation, show in list(self._not_shown.items()):
                self._show_late(invocation, show)
            return
        log.warning("no contents key yet (%s); contents are not saved until there is", found)

    # -- restore -------------------------------------------------------------------

    def contents_for(self, saved: PaneSnapshot, path: Path | None = None) -> bytes | None:
        """A restored pane's old contents: b"" for none, None for some not readable yet
        (no key yet: see `show_when_ready`). Reads one file on the loop: a start, or a
        restore from the history (`path`: the history entry's file)."""
        if not self.enabled or not self.store.is_name(saved.invocation):
            return b""
        if self._key is None:
            return None if (path or self.store.path(saved.invocation)).exists() else b""
        ahead = self._ahead.pop(saved.invocation, None) if path is None else None
        self._top_up()
        try:
            if ahead is not None:
                return ahead.result()
            return self.store.read(self._key, saved.invocation, MAX_PANE_CONTENTS_BYTES, path)
        except (ContentsProblem, ValueError) as e:
            log.error("pane %d (%s): %s", saved.id, saved.argv[0], e)
            self.problems.append(
                UnrestoredPane(saved.id, tuple(saved.argv), saved.cwd.path, saved.title, str(e))
            )
            return b""

    def peek(self, saved: PaneSnapshot, path: Path | None, lines: int) -> bytes:
        """The last `lines` lines of saved contents (`path`: a history entry's) for a look
        before a restore; b"" for none readable, nothing recorded. Blocking: a worker's."""
        if not self.enabled or self._key is None or not self.store.is_name(saved.invocation):
            return b""
        with contextlib.suppress(ContentsProblem, ValueError):
            contents = self.store.read(self._key, saved.invocation, MAX_PANE_CONTENTS_BYTES, path)
            return last_lines(contents, lines, MAX_PEEK_BYTES)
        return b""

    def read_ahead(self, panes: Iterable[PaneSnapshot]) -> None:
        """Start reading the contents of `panes` (those a restore is about to take, in
        order) on READ_AHEAD_THREADS threads, at most READ_AHEAD_PANES ahead: opening
        the seal and decompressing let go of the GIL, so the restore goes on making
        panes meanwhile (500 panes' contents: ~85 ms read one by one on the loop).
        `contents_for` takes each when it is done; `end_read_ahead` drops the rest."""
        if not self.enabled or self._key is None:
            return
        self._to_read = deque(p.invocation for p in panes if self.store.is_name(p.invocation))
        self._reader = ThreadPoolExecutor(READ_AHEAD_THREADS, "mux-contents")
        self._top_up()

    def _top_up(self) -> None:
        while self._reader is not None and self._to_read and len(self._ahead) < READ_AHEAD_PANES:
            invocation = self._to_read.popleft()
            read = self.store.read
            self._ahead[invocation] = self._reader.submit(
                read, cast(bytes, self._key), invocation, MAX_PANE_CONTENTS_BYTES
            )

    def end_read_ahead(self) -> None:
        """Whatever a restore did not take is not read (its threads end)."""
        for future in self._ahead.values():
            future.cancel()
        self._ahead.clear()
        self._to_read.clear()
        if self._reader is not None:
            self._reader.shutdown(wait=False)
            self._reader = None

    def show_when_ready(self, invocation: str, show: Callable[[bytes], None]) -> None:
        """The key is not there yet: `show(contents)` once it is (nothing is saved over
        the old contents meanwhile)."""
        if self.enabled and self.store.is_name(invocation):
            self._not_shown[invocation] = show

    def _show_late(self, invocation: str, show: Callable[[bytes], None]) -> None:
        del self._not_shown[invocation]
        assert self._key is not None
        try:
            contents = self.store.read(self._key, invocation, MAX_PANE_CONTENTS_BYTES)
        except (ContentsProblem, ValueError) as e:
            log.error("the saved contents of launch %s: %s", invocation[:8], e)
            return
        if contents:
            show(contents)

    # -- saving --------------------------------------------------------------------

    def start(self) -> None:
        if self.enabled:
            self._timer = self._loop.call_later(self._settings.contents_save_seconds, self._tick)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        self._timer = None
        task = self._loop.create_task(self.save_changed())
        task.add_done_callback(lambda done: self.start() if not done.cancelled() else None)

    async def save_changed(self, within: float | None = None) -> int:
        """Save the contents of every running pane whose output changed; how many were
        saved. `within`: stop after that many seconds (the stop's final save)."""
        if not self.enabled:
            return 0
        if self._key is None:
            await self.find_key()
        key = self._key
        if key is None:
            return 0
        deadline = None if within is None else time.monotonic() + within
        saved = 0
        async with self._saving:
            with _loop_first():
                for pane in [pane for pane in self._table if self._changed(pane)]:
                    if deadline is not None and time.monotonic() > deadline:
                        log.info("the contents of some panes are left for the next save")
                        break
                    if await self._save(key, pane):
                        saved += 1
            await off_the_loop(self._loop, self._tidy)
        return saved

    def _changed(self, pane: Pane) -> bool:
        invocation = pane.launch.invocation
        return (
            pane.is_running
            and invocation not in self._not_shown
            and self.store.is_name(invocation)
            and self._saved_totals.get(invocation) != pane.view.scrollback.total
        )

    async def _save(self, key: bytes, pane: Pane) -> bool:
        view, invocation = pane.view, pane.launch.invocation
        total = view.scrollback.total
        history = view.scrollback.contents()
        dump, _ = view.dump_screen()
        rows, cols = pane.rows, pane.cols
        lines = self._settings.restore_scrollback_lines

        def made_and_written() -> None:
            text = contents_of(
                history,
                dump,
                rows,
                cols,
                max_lines=lines,
                max_bytes=MAX_PANE_CONTENTS_BYTES,
                history_cut=total > len(history),
            )
            self.store.write(key, invocation, text)

        try:
            await off_the_loop(self._loop, made_and_written)
        except Exception as e:  # the pane's last saved contents stay as they were
            log.error("pane %d: its contents could not be saved: %s", pane.id, e)
            return False
        self._saved_totals[invocation] = total
        return True

    def _tidy(self) -> None:
        """Files of launches no longer here go; then, past the cap, those of the panes
        used least recently (on a worker thread)."""
        order = {pane.launch.invocation: pane.use_order for pane in self._table}
        kept = set(order) | set(self._not_shown)
        sizes = self.store.sizes()
        self.store.remove(name for name in sizes if name not in kept)
        on_disk = {name: size for name, size in sizes.items() if name in kept}
        over = sum(on_disk.values()) - self._settings.contents_max_bytes
        for name in sorted(on_disk, key=lambda name: order.get(name, 0)):
            if over <= 0:
                break
            log.warning("the saved contents of launch %s went: past contents_max_bytes", name[:8])
            self.store.remove([name])
            self._saved_totals.pop(name, None)
            over -= on_disk[name]

    # -- forget ----------------------------------------------------------------------

    async def forget(self, history_files: Callable[[], Iterable[Path]]) -> Forgotten:
        """Every saved contents (here and in the history) and the key, gone; a new key is
        made at the next save."""
        async with self._saving:
            self._key = None
            self._saved_totals.clear()

            def wipe() -> Forgotten:
                forgotten = forget(self._state, bus_address=self._bus_address)
                self.store.wipe()
                for path in history_files():
                    path.unlink(missing_ok=True)
                return forgotten

            forgotten = await off_the_loop(self._loop, wipe)
        log.info("saved contents and their key were forgotten (%s)", forgotten)
        return forgotten


@contextlib.contextmanager
def _loop_first() -> Iterator[None]:
    """The GIL handed back to the event loop sooner while a save runs."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, SAVING_SWITCH_INTERVAL))
    try:
        yield
    finally:
        sys.setswitchinterval(before)
