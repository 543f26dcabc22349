"""Work done in steps: a generator that yields between steps and returns its result.

Long work on the event loop (a capture of hundreds of panes, a read of the process
table) is written as such a generator, so that the same code runs in one go where
nothing may change between steps, or with the loop's turn between two steps
where the panes' output and the calls must not wait for all of it.
"""

import asyncio
from collections.abc import Generator
from typing import TypeVar

Result = TypeVar("Result")
Steps = Generator[None, None, Result]


def all_at_once(steps: Steps[Result]) -> Result:
    """Every step, one after another."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


async def in_turns(steps: Steps[Result]) -> Result:
    """Every step, with the loop's turn between two."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        await asyncio.sleep(0)
