"""LangChain's callback dispatch, without its empty gather per token (see langchain_dispatch.py for why)."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler, manager
from threadline.agent.demo_model import DemoChatModel
from threadline.langchain_dispatch import (
    LANGCHAIN_DISPATCH,
    dispatch_callbacks_without_empty_gather,
    dispatch_without_empty_gather,
    replaceable,
)


def test_it_replaces_only_the_dispatch_it_was_written_against():
    """Fails after a LangChain upgrade that changes `ahandle_event`: read the new one, then update the hash."""
    assert replaceable()


class Inline(BaseCallbackHandler):
    run_inline = True

    def __init__(self, name: str, calls: list[str]) -> None:
        self.name, self.calls = name, calls

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.calls.append(f"{self.name} {token}")


class InlineAsync(AsyncCallbackHandler):
    run_inline = True

    def __init__(self, name: str, calls: list[str]) -> None:
        self.name, self.calls = name, calls

    async def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        await asyncio.sleep(0)
        self.calls.append(f"{self.name} {token}")


class Gathered(InlineAsync):
    run_inline = False


class InThread(Inline):
    run_inline = False


class Failing(Inline):
    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        raise ValueError(token)


class Ignoring(Inline):
    ignore_llm = True


def test_handlers_are_called_as_langchain_calls_them():
    """Inline handlers in order, then the others together; a failing one logged, an ignoring one skipped."""

    async def calls_made(dispatch: Any) -> list[str]:
        calls: list[str] = []
        handlers = [
            Inline("a", calls),
            Gathered("b", calls),
            InlineAsync("c", calls),
            Failing("d", calls),
            InThread("e", calls),
            Ignoring("f", calls),
            Inline("g", calls),
        ]
        for token in ("x", "y"):
            await dispatch(handlers, "on_llm_new_token", "ignore_llm", token)
        return calls

    def per_token(calls: list[str]) -> list[tuple[list[str], set[str]]]:
        """Each event's inline calls in order and the others' as a set (a thread's and a task's race)."""
        return [(calls[n : n + 3], set(calls[n + 3 : n + 5])) for n in (0, 5)]

    expected = asyncio.run(calls_made(LANGCHAIN_DISPATCH))
    assert per_token(expected)[0] == (["a x", "c x", "g x"], {"b x", "e x"}) and len(expected) == 10
    assert per_token(asyncio.run(calls_made(dispatch_without_empty_gather))) == per_token(expected)


def test_a_served_models_tokens_reach_every_handler_through_it():
    calls: list[str] = []
    dispatch_callbacks_without_empty_gather()
    try:
        assert manager.ahandle_event is dispatch_without_empty_gather

        async def stream() -> str:
            config = {"callbacks": [Inline("inline", calls), Gathered("gathered", calls)]}
            return "".join([str(chunk.content) async for chunk in DemoChatModel(token_delay=0).astream("hi", config)])

        text = asyncio.run(stream())
    finally:
        manager.ahandle_event = LANGCHAIN_DISPATCH
    tokens = [call.split(" ", 1)[1] for call in calls if call.startswith("inline ")]
    assert text and "".join(tokens) == text
    assert [call for call in calls if call.startswith("gathered ")] == [f"gathered {token}" for token in tokens]
