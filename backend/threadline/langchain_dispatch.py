"""LangChain's async callback dispatch without an empty `asyncio.gather` per event.

Every token a model streams is one `on_llm_new_token` event, which `langchain_core.callbacks.manager.
ahandle_event` hands to the run's handlers: the inline ones one after another, then the others through
`asyncio.gather`, called even when there are none. Every handler of a threadline answer is inline
(LangGraph's `messages` handler, `ModelCalls`, LangChain's tracer when tracing), so each token paid for a gather of
nothing: the event loop looked up and a future made and resolved. `bench breakdown`'s ledger put that
gather at about a twentieth of a served answer's CPU.

`lean_dispatch` does what `ahandle_event` does, in the same order, and gathers only when a handler is not
inline. Nor does it call a handler's `on_llm_new_token` that is LangChain's own do-nothing default:
`ModelCalls` counts every model call but has nothing to do per token, and was called for each one. It
replaces LangChain's function only while that function is the one it was written against (its source's
hash): after an upgrade that changes it, LangChain's own runs again until this is checked against the new
one (the test of this module fails then).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
from typing import Any

from langchain_core.callbacks import manager
from langchain_core.callbacks.base import AsyncCallbackHandler, BaseCallbackHandler

# sha256 of `inspect.getsource(langchain_core.callbacks.manager.ahandle_event)` this module does the work of
REPLACED_SOURCE = "d7e942231aa70081074514c8e0c5b2922444d098dc77bb259a02ffd2c01f4bda"  # langchain-core 1.7.2
LANGCHAIN_DISPATCH = manager.ahandle_event


# A handler that does not define `on_llm_new_token` inherits one of these, which do nothing (their body is
# their docstring: the test checks it). Not calling them changes nothing but what each token costs.
TOKEN = "on_llm_new_token"
INHERITED_TOKEN_HANDLERS = frozenset({BaseCallbackHandler.on_llm_new_token, AsyncCallbackHandler.on_llm_new_token})


async def lean_dispatch(
    handlers: list[BaseCallbackHandler], event_name: str, ignore_condition_name: str | None, *args: Any, **kwargs: Any
) -> None:
    for handler in [h for h in handlers if h.run_inline]:
        if event_name == TOKEN and type(handler).on_llm_new_token in INHERITED_TOKEN_HANDLERS:
            continue
        await manager._ahandle_event_for_handler(handler, event_name, ignore_condition_name, *args, **kwargs)
    if others := [h for h in handlers if not h.run_inline]:
        await asyncio.gather(
            *(
                manager._ahandle_event_for_handler(handler, event_name, ignore_condition_name, *args, **kwargs)
                for handler in others
            )
        )


def replaceable() -> bool:
    """Whether LangChain's dispatch is still the function `lean_dispatch` was written against."""
    source = inspect.getsource(LANGCHAIN_DISPATCH).encode()
    return hashlib.sha256(source).hexdigest() == REPLACED_SOURCE


def use_lean_dispatch() -> None:
    """Call once per server process; a host app that embeds threadline decides this for itself."""
    if replaceable():
        manager.ahandle_event = lean_dispatch
