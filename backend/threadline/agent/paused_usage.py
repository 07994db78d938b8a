"""What a hosted agent's paused answer used before it paused, kept until the answer goes on.

A hosted agent's calls that the transcript does not hold (a router's structured output, a sub-agent's) are counted
by the process that runs them (agent/hosting.py). An answer that waits for the person goes on in a later run,
perhaps in another process, and its record must count the calls made before the pause too. The paused run cannot
write its state (that would make its waiting task anew), so what it used goes to the conversation graph's store,
under the conversation's thread, and the run that goes on takes it back. A paused answer a new message declined
leaves what it kept there, and no run takes it back: only a run that goes on after a pause does, and that pause
kept its own in its place.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langgraph.errors import GraphInterrupt
from langgraph.store.base import BaseStore

from threadline.turn_context import TurnContext, current_turn

NAMESPACE = ("threadline", "paused-answers")


@asynccontextmanager
async def across_a_pause(store: BaseStore | None, thread_id: str) -> AsyncIterator[None]:
    """Around a hosted agent's run: what the answer used before it paused taken back when it goes on, and what it
    used so far kept when it pauses (a LangGraph interrupt)."""
    turn = current_turn.get()
    if turn is None or store is None:
        yield
        return
    if turn.resuming:
        await take_back(store, thread_id, turn)
    try:
        yield
    except GraphInterrupt:
        await keep(store, thread_id, turn)
        raise


async def keep(store: BaseStore, thread_id: str, turn: TurnContext) -> None:
    """The calls the paused answer made so far, and the models they went to."""
    calls = [[message_id, dict(usage)] for message_id, usage in turn.usage_by_call]
    value = {"calls": calls, "models": sorted(turn.models_called)}
    await store.aput(NAMESPACE, thread_id, value, index=False)


async def take_back(store: BaseStore, thread_id: str, turn: TurnContext) -> None:
    """The calls kept when the answer paused, counted again by the run that goes on."""
    item = await store.aget(NAMESPACE, thread_id)
    if item is None:
        return
    await store.adelete(NAMESPACE, thread_id)
    turn.usage_by_call.extend((message_id, usage) for message_id, usage in item.value.get("calls", []))
    turn.models_called.update(item.value.get("models", []))
