"""Pane and window ids, named by a random instance token (docs/dbus-api.md#instance-token).

The token and the counters are created together and only replaced together:
ids from one space never get confused with another's.
"""

import secrets
from collections.abc import Iterable

INSTANCE_TOKEN_BYTES = 16


class IdSpace:
    def __init__(self) -> None:
        self.token = secrets.token_bytes(INSTANCE_TOKEN_BYTES)
        self._next_pane = 1
        self._next_window = 1

    @classmethod
    def restored(cls, token: bytes, next_pane: int, next_window: int) -> "IdSpace":
        """The same id space, carried across a graceful upgrade."""
        ids = cls()
        ids.token, ids._next_pane, ids._next_window = token, next_pane, next_window
        return ids

    @property
    def next_pane_id(self) -> int:
        """The id the next pane will get (a failed spawn does not use one up)."""
        return self._next_pane

    def new_pane_id(self) -> int:
        pane_id = self._next_pane
        self._next_pane += 1
        return pane_id

    @property
    def next_window_id(self) -> int:
        return self._next_window

    def new_window_id(self) -> int:
        window_id = self._next_window
        self._next_window += 1
        return window_id

    def reserve(self, pane_ids: Iterable[int], window_ids: Iterable[int]) -> None:
        """Ids a restore gives back to the panes and windows it brings back: new ones
        start above every one of them (the token is new all the same: KillIf stays safe)."""
        self._next_pane = max([self._next_pane, *(pane_id + 1 for pane_id in pane_ids)])
        self._next_window = max([self._next_window, *(window + 1 for window in window_ids)])
