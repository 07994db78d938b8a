"""LangChain's async callback dispatch without an empty `asyncio.gather` per event.

Every token a model streams is one `on_llm_new_token` event, which `langchain_core.callbacks.manager.
ahandle_event` hands to the run's handlers: the inline ones one after another, then the others through
`asyncio.gather`, called even when there are none. Every handler of a threadline answer is inline
(LangGraph's `messages` handler, `ModelCalls`, LangChain's tracer when tracing), so each token paid for a gather of
nothing: the event loop looked up and a future made and resolved. `bench breakdown`'s ledger put that
gather at about a twentieth of a served answer's CPU.

`lean_dispatch` does what `ahandle_event` does, in the same order, and gathers only when a handler is not
inline. Nor does it call a handler's `on_llm_new_token` that is LangChain's own do-nothing default:
`ModelCalls` counts every model call but has nothing to do per token, and was called for each one. An inline
handler's synchronous `on_llm_new_token` (LangGraph's `messages` handler) it calls itself, as
`_ahandle_event_for_handler` would, without the coroutine and the `inspect` check that function makes for each
token. It replaces LangChain's function only while both functions are the ones it was written against (their
source's hash): after an upgrade that changes one, LangChain's own runs again until this is checked against the
new one (the test of this module fails then).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import manager
from langchain_core.callbacks.base import AsyncCallbackHandler, BaseCallbackHandler

# sha256 of `inspect.getsource(f)` for each LangChain function this module does the work of (langchain-core 1.7.2)
REPLACED_SOURCES: dict[Callable[..., Any], str] = {
    manager.ahandle_event: "d7e942231aa70081074514c8e0c5b2922444d098dc77bb259a02ffd2c01f4bda",
    manager._ahandle_event_for_handler: "a3c335cde395aa55a43357ba5a6f75058e42511934c1cebe3d0bf926c5b67ad1",
}
LANGCHAIN_DISPATCH = manager.ahandle_event


# A handler that does not define `on_llm_new_token` inherits one of these, which do nothing (their body is
# their docstring: the test checks it). Not calling them changes nothing but what each token costs.
TOKEN = "on_llm_new_token"
INHERITED_TOKEN_HANDLERS = frozenset({BaseCallbackHandler.on_llm_new_token, AsyncCallbackHandler.on_llm_new_token})
SKIP, CALL, AWAIT = "skip", "call", "await"  # what a token does with a handler's `on_llm_new_token`
_TOKEN_WAYS: dict[type, str] = {}  # each handler class's, found once


async def lean_dispatch(
    handlers: list[BaseCallbackHandler], event_name: str, ignore_condition_name: str | None, *args: Any, **kwargs: Any
) -> None:
    for handler in [h for h in handlers if h.run_inline]:
        if event_name == TOKEN and _token_handled(handler, ignore_condition_name, args, kwargs):
            continue
        await manager._ahandle_event_for_handler(handler, event_name, ignore_condition_name, *args, **kwargs)
    if others := [h for h in handlers if not h.run_inline]:
        await asyncio.gather(
            *(
                manager._ahandle_event_for_handler(handler, event_name, ignore_condition_name, *args, **kwargs)
                for handler in others
            )
        )


def _token_handled(handler: BaseCallbackHandler, ignore: str | None, args: Any, kwargs: Any) -> bool:
    """True when this token is done with here: the handler's `on_llm_new_token` is LangChain's do-nothing default,
    or a synchronous one called (or ignored) as `_ahandle_event_for_handler` does, a failure logged and raised
    when the handler says so. False for a coroutine, which LangChain's function awaits."""
    event, kind = handler.on_llm_new_token, type(handler)
    own = getattr(event, "__func__", None) is kind.on_llm_new_token  # its class's, not one set on the handler
    if (way := _TOKEN_WAYS.get(kind) if own else None) is None:
        way = _token_way(event)
        if own:
            _TOKEN_WAYS[kind] = way
    if way != CALL:
        return way == SKIP
    try:
        if ignore is None or not getattr(handler, ignore):
            event(*args, **kwargs)
    except NotImplementedError as e:
        manager.logger.warning("NotImplementedError in %s.%s callback: %s", handler.__class__.__name__, TOKEN, repr(e))
    except Exception as e:
        manager.logger.warning("Error in %s.%s callback: %s", handler.__class__.__name__, TOKEN, repr(e))
        if handler.raise_error:
            raise
    return True


def _token_way(event: Callable[..., Any]) -> str:
    if getattr(event, "__func__", event) in INHERITED_TOKEN_HANDLERS:
        return SKIP
    return AWAIT if inspect.iscoroutinefunction(event) else CALL


def replaceable() -> bool:
    """Whether LangChain's dispatch functions are still the ones `lean_dispatch` was written against."""
    return all(
        hashlib.sha256(inspect.getsource(function).encode()).hexdigest() == digest
        for function, digest in REPLACED_SOURCES.items()
    )


def use_lean_dispatch() -> None:
    """Call once per server process; a host app that embeds threadline decides this for itself."""
    if replaceable():
        manager.ahandle_event = lean_dispatch
