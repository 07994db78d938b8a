"""LangSmith's bookkeeping around each middleware hook, run inline while nothing is traced to LangSmith.

LangChain's `create_agent` wraps every `wrap_model_call` and `wrap_tool_call` hook in LangSmith's `traceable`,
whether LangSmith tracing is on or not. Its async wrapper hands its set-up and its end to a worker thread
(two thread hops per hook call) and runs the hook in a task of its own: for the built-in agent, two hops
before every model call starts and four around every tool call. With tracing off that bookkeeping does
nothing that could block, so a `threadline serve` process runs it inline, through LangSmith's documented
`set_runtime_overrides`; with LANGSMITH_TRACING on, LangSmith's own threads are used, as without this.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from typing import Any

import langsmith
from langsmith.utils import tracing_is_enabled


def run_langsmith_bookkeeping_inline() -> None:
    """Call once per server process; a host app that embeds threadline decides this for itself."""
    langsmith.set_runtime_overrides(aio_to_thread=_inline_unless_tracing)


async def _inline_unless_tracing(
    default: Callable[..., Awaitable[Any]], context: contextvars.Context, function: Any, /, *args: Any, **kwargs: Any
) -> Any:
    if tracing_is_enabled():
        return await default(context, function, *args, **kwargs)
    return context.run(function, *args, **kwargs)
