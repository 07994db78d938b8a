"""Readers following a running answer in the process that runs it: each gets every event once, in order, to the
end, whenever it joins and whichever other reader goes away."""

from __future__ import annotations

import asyncio

from threadline import events as ev
from threadline.answers.recordings import Recordings


async def never_alive(_conn: object, _thread_id: str) -> bool:
    return False


async def test_readers_follow_to_the_end_when_another_reader_goes_away() -> None:
    recording = Recordings(None, never_alive).start("thread", "message")
    deltas = [ev.TextDelta(id="text-1", delta=str(number)) for number in range(6)]

    async def read() -> list[ev.Event]:
        return [event async for batch in recording.follow() for event in batch]

    early, leaving = asyncio.create_task(read()), asyncio.create_task(read())
    await asyncio.sleep(0)  # both wait for the first event
    leaving.cancel()
    for delta in deltas[:3]:
        recording.add(delta)
    late = asyncio.create_task(read())
    await asyncio.sleep(0)
    for delta in deltas[3:]:
        recording.add(delta)
        await asyncio.sleep(0)
    recording.end()
    assert await early == deltas
    assert await late == deltas
    assert leaving.cancelled()
