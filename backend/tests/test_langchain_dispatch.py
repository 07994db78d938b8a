"""LangChain's callback dispatch, without its empty gather and do-nothing calls per token (see
langchain_dispatch.py for why)."""

from __future__ import annotations

import ast
import asyncio
import inspect
import textwrap
from typing import Any

from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler, manager
from threadline.agent.demo_model import DemoChatModel
from threadline.serving.langchain_dispatch import (
    INHERITED_TOKEN_HANDLERS,
    LANGCHAIN_DISPATCH,
    lean_dispatch,
    replaceable,
    use_lean_dispatch,
)


def test_it_replaces_only_the_dispatch_it_was_written_against():
    """Fails after a LangChain upgrade that changes `ahandle_event`: read the new one, then update the hash."""
    assert replaceable()


def test_the_token_handlers_it_skips_do_nothing():
    """Their body is their docstring, so a handler that inherits one is not called for each token."""
    for method in INHERITED_TOKEN_HANDLERS:
        (definition,) = ast.parse(textwrap.dedent(inspect.getsource(method))).body
        assert isinstance(definition, ast.FunctionDef | ast.AsyncFunctionDef)
        assert [type(statement) for statement in definition.body] == [ast.Expr], method.__qualname__
        assert isinstance(definition.body[0], ast.Expr) and isinstance(definition.body[0].value, ast.Constant)


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


class Unimplemented(Inline):
    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        raise NotImplementedError(token)


class Strict(Failing):
    raise_error = True


class Quiet(BaseCallbackHandler):
    """Like `ModelCalls`: inline, and nothing to do per token."""

    run_inline = True


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
            Quiet(),
        ]
        for token in ("x", "y"):
            await dispatch(handlers, "on_llm_new_token", "ignore_llm", token)
        return calls

    def per_token(calls: list[str]) -> list[tuple[list[str], set[str]]]:
        """Each event's inline calls in order and the others' as a set (a thread's and a task's race)."""
        return [(calls[n : n + 3], set(calls[n + 3 : n + 5])) for n in (0, 5)]

    expected = asyncio.run(calls_made(LANGCHAIN_DISPATCH))
    assert per_token(expected)[0] == (["a x", "c x", "g x"], {"b x", "e x"}) and len(expected) == 10
    assert per_token(asyncio.run(calls_made(lean_dispatch))) == per_token(expected)


def test_a_failing_handler_is_logged_or_raises_as_langchain_does(caplog: Any):
    """The synchronous token handlers `lean_dispatch` calls itself: what LangChain logs, and what it raises."""

    async def outcome(dispatch: Any, handler: BaseCallbackHandler) -> tuple[list[str], str | None]:
        calls: list[str] = []
        caplog.clear()
        try:
            await dispatch([handler, Inline("after", calls)], "on_llm_new_token", "ignore_llm", "x", run_id="r")
        except ValueError as error:
            return [record.getMessage() for record in caplog.records], repr(error)
        return [*calls, *(record.getMessage() for record in caplog.records)], None

    for handler in (Unimplemented("u", []), Failing("f", []), Strict("s", [])):
        expected = asyncio.run(outcome(LANGCHAIN_DISPATCH, handler))
        assert expected[0], type(handler).__name__  # logged, whether it raised or not
        assert asyncio.run(outcome(lean_dispatch, handler)) == expected


def test_a_token_handler_set_on_one_handler_is_called_as_langchain_calls_it():
    """A handler whose class keeps LangChain's do-nothing default but that was given its own `on_llm_new_token`."""

    async def calls_made(dispatch: Any) -> list[str]:
        calls: list[str] = []
        handler = Quiet()
        handler.on_llm_new_token = lambda token, **kwargs: calls.append(token)  # type: ignore[method-assign]
        await dispatch([handler, Quiet()], "on_llm_new_token", "ignore_llm", "x")
        return calls

    assert asyncio.run(calls_made(lean_dispatch)) == asyncio.run(calls_made(LANGCHAIN_DISPATCH)) == ["x"]


def test_a_served_models_tokens_reach_every_handler_through_it():
    calls: list[str] = []
    use_lean_dispatch()
    try:
        assert manager.ahandle_event is lean_dispatch

        async def stream() -> str:
            config = {"callbacks": [Inline("inline", calls), Gathered("gathered", calls)]}
            return "".join([str(chunk.content) async for chunk in DemoChatModel(token_delay=0).astream("hi", config)])

        text = asyncio.run(stream())
    finally:
        manager.ahandle_event = LANGCHAIN_DISPATCH
    tokens = [call.split(" ", 1)[1] for call in calls if call.startswith("inline ")]
    assert text and "".join(tokens) == text
    assert [call for call in calls if call.startswith("gathered ")] == [f"gathered {token}" for token in tokens]
