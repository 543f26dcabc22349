"""Waiting in the event loop for a descriptor the loop does not own (an attach
connection of muxctl.pane_link's, which reads and writes it itself)."""

import asyncio


async def readable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    loop.add_reader(fd, ready.set_result, None)
    try:
        await ready
    finally:
        loop.remove_reader(fd)
