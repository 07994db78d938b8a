"""The answer's outbox: every event reaches the response once, in order, whatever the reader's timing."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st
from threadline.answers.outbox import Outbox


async def test_a_reader_waits_for_the_first_event_and_takes_all_that_are_waiting() -> None:
    outbox = Outbox()
    reading = asyncio.create_task(outbox.take())
    await asyncio.sleep(0)
    assert not reading.done(), "nothing to take yet"
    outbox.put("a")
    outbox.put("b")
    assert await reading == ["a", "b"]
    outbox.put("c")
    assert await outbox.take() == ["c"]


async def test_events_put_back_are_taken_first() -> None:
    outbox = Outbox()
    outbox.put("a")
    taken = await outbox.take()
    outbox.put("b")
    outbox.put_back(taken)
    assert await outbox.take() == ["a", "b"]


async def test_a_reader_that_went_away_does_not_fail_the_answer_that_puts_next() -> None:
    outbox = Outbox()
    reading = asyncio.create_task(outbox.take())
    await asyncio.sleep(0)
    reading.cancel()
    outbox.put("a")  # the reader's wait is cancelled but its task has not run its cleanup yet
    await asyncio.gather(reading, return_exceptions=True)
    outbox.put("b")
    assert await outbox.take() == ["a", "b"]


@settings(deadline=None, max_examples=50)
@given(st.lists(st.integers(min_value=0, max_value=3), max_size=30))
def test_every_event_is_taken_once_in_order_however_puts_and_reads_interleave(pauses: list[int]) -> None:
    """Each event is put after a number of the loop's turns; the reader takes whatever is waiting whenever it runs."""

    async def run() -> list[int]:
        outbox = Outbox()

        async def answer() -> None:
            for number, pause in enumerate(pauses):
                for _ in range(pause):
                    await asyncio.sleep(0)
                outbox.put(number)
            outbox.put(None)

        async def response() -> list[int]:
            got: list[int] = []
            while None not in got:
                got += await outbox.take()
            return got[:-1]

        answering = asyncio.create_task(answer())
        got = await response()
        await answering
        return got

    assert asyncio.run(run()) == list(range(len(pauses)))
