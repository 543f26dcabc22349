"""Values kept from one use to the next, each made again only when what it is made of
changed (a ListPanes entry, a snapshot's pane or window model).

What a value is made of is read afresh and compared at every use, never trusted to be
announced, so a kept value is never stale; it must be immutable (strings, numbers,
tuples, frozen records), so that equal means unchanged.
"""

import weakref
from collections.abc import Callable, Hashable, Iterable, MutableMapping
from typing import Generic, TypeVar

Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value")


class Remade(Generic[Key, Value]):
    def __init__(self, weak_keys: bool = False) -> None:
        """`weak_keys`: a value goes with its key (a pane), not with `keep_only`."""
        self._kept: MutableMapping[Key, tuple[object, Value]] = (
            weakref.WeakKeyDictionary() if weak_keys else {}
        )

    def get(self, key: Key, made_of: object, make: Callable[[], Value]) -> Value:
        """The value kept for `key` if it was made of what equals `made_of`, else
        `make()` (kept from now on)."""
        kept = self._kept.get(key)
        if kept is not None and kept[0] == made_of:
            return kept[1]
        value = make()
        self._kept[key] = (made_of, value)
        return value

    def keep_only(self, keys: Iterable[Key]) -> None:
        """Forget the values of every other key."""
        wanted = set(keys)
        for key in [key for key in self._kept if key not in wanted]:
            del self._kept[key]
