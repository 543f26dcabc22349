"""Data cut into pieces where a hypothesis strategy says, as reads would deliver it."""

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T", bytes, str)


def pieces(data: T, cuts: Sequence[int]) -> list[T]:
    """`data` cut at each of `cuts` (modulo its length + 1, in order): empty pieces
    included, as a read that returns nothing new."""
    points = sorted(cut % (len(data) + 1) for cut in cuts)
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
