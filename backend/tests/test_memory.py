"""A finished answer lets go of its memory: what threadline keeps after it (the fallback's copy of the
conversation's checkpoint, recordings for resume, traces) holds none of the answer's own objects, and the answer
makes no cycle of references, so it is freed the moment it ends rather than at the next full garbage collection."""

from __future__ import annotations

import asyncio
import gc
import time

import pytest
from helpers import chat, new_conversation_id, on_backend, running
from threadline.answers.turn import Turn


def answers_in_memory(conversation_id: str) -> int:
    return sum(1 for thing in gc.get_objects() if isinstance(thing, Turn) and thing.conversation_id == conversation_id)


@pytest.mark.parametrize("backend", ["postgres", "memory"])
async def test_an_answer_is_freed_once_it_has_ended(make_settings, backend):
    gc.disable()  # so that only reference counting frees anything: what a cycle holds stays
    try:
        async with running(on_backend(make_settings, backend)) as client:
            conversation_id = new_conversation_id()
            for text in ("hello", "and again"):
                await chat(client, conversation_id, text)
            # The answer's task closes its stream first, then records its trace: wait for that, not a time.
            deadline = time.monotonic() + 10
            while (kept := answers_in_memory(conversation_id)) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert kept == 0
    finally:
        gc.enable()
