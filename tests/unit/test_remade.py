"""Remade: a kept value is given back while what it is made of is equal, made again
when it differs, forgotten by keep_only or (weak keys) with its key."""

from __future__ import annotations

import gc

from mux.system.remade import Remade


class Key:
    pass


def test_a_value_is_made_again_only_when_what_it_is_made_of_differs() -> None:
    remade: Remade[str, list[int]] = Remade()
    first = remade.get("a", (1, "x"), lambda: [1])
    assert remade.get("a", (1, "x"), lambda: [2]) is first
    changed = remade.get("a", (2, "x"), lambda: [3])
    assert changed == [3] and changed is not first
    remade.get("b", (), lambda: [4])
    remade.keep_only(["a"])
    assert remade.get("b", (), lambda: [5]) == [5]  # forgotten: made again
    assert remade.get("a", (2, "x"), lambda: [6]) is changed


def test_with_weak_keys_a_value_goes_with_its_key() -> None:
    remade: Remade[Key, list[int]] = Remade(weak_keys=True)
    key = Key()
    remade.get(key, 1, lambda: [1])
    assert remade.get(key, 1, lambda: [2]) == [1]
    del key
    gc.collect()
    assert len(list(remade._kept)) == 0  # (nothing else shows it)
