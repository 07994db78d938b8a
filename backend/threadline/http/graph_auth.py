"""A langgraph.json's `auth`: its `@auth.authenticate` handler names the caller, as `Threadline(identify=...)` does.

open_deep_research declares `"auth": {"path": "./src/security/auth.py:auth"}`, a `langgraph_sdk.Auth` whose
authenticate handler checks the bearer token and returns the user. LangGraph's server calls it with the request's
parts its parameters name (`authorization`, `headers`, `path`, `method`, `request`); a string, a dict with an
`identity`, or a user object with one is the caller, its `permissions` are roles; an `Auth.exceptions.HTTPException`
refuses the request with its status. Every conversation is then its caller's own, as with any login.

Its `@auth.on` handlers (who may read or write which thread, store item or assistant) are code threadline cannot
run faithfully: its threads are conversations it scopes to their caller itself. So they stop start-up, naming them,
unless the operator says that threadline's rule stands in for them (THREADLINE_GRAPH_AUTH_HANDLERS=ownership,
right for the usual "a user sees their own threads" handlers, which is what open_deep_research's do).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

from langgraph_sdk import Auth
from litestar.connection import ASGIConnection

from threadline.agent.langgraph_json import auth_target
from threadline.agent.loading import AgentLoadError, load_source
from threadline.http.host_identity import Identify, Principal
from threadline.refusals import RefusalCode, Refused

log = logging.getLogger(__name__)


def graph_identify(graph: str | None, handlers: str) -> Identify | None:
    """The caller as the langgraph.json's auth names it; None when THREADLINE_GRAPH has no `auth`."""
    if graph is None or (target := auth_target(graph)) is None:
        return None
    auth = load_source(target)
    if not isinstance(auth, Auth):
        raise AgentLoadError(f"THREADLINE_GRAPH: the auth {target} is a {type(auth).__name__}, not langgraph_sdk.Auth")
    if (authenticate := auth._authenticate_handler) is None:
        raise AgentLoadError(f"THREADLINE_GRAPH: the auth {target} has no @auth.authenticate handler to name callers")
    if on := sorted({"*" if key is None else ".".join(key) for key in _handler_keys(auth)}):
        if handlers != "ownership":
            raise AgentLoadError(
                f"THREADLINE_GRAPH: the auth's @auth.on handlers ({', '.join(on)}) cannot be run by threadline, which "
                "keeps each caller's conversations their own; set THREADLINE_GRAPH_AUTH_HANDLERS=ownership if that is "
                "what they do"
            )
        log.warning(
            "the auth's @auth.on handlers (%s) are not run: each caller owns their conversations", ", ".join(on)
        )
    return _identify_with(authenticate)


def _handler_keys(auth: Auth) -> list[tuple[str, str] | None]:
    keys: list[tuple[str, str] | None] = list(auth._handlers)
    return keys + [None] * len(auth._global_handlers)


def _identify_with(authenticate: Callable[..., Any]) -> Identify:
    wanted = set(inspect.signature(authenticate).parameters)

    async def identify(connection: ASGIConnection[Any, Any, Any, Any]) -> Principal | None:
        parts = {
            "authorization": connection.headers.get("authorization"),
            "headers": {key.encode(): value.encode() for key, value in connection.headers.items()},
            "path": connection.scope["path"],
            "method": connection.scope.get("method", "GET"),
            "request": connection,
            "scopes": [],
        }
        try:
            said = await authenticate(**{name: value for name, value in parts.items() if name in wanted})
        except Auth.exceptions.HTTPException as refused:
            code: RefusalCode = "FORBIDDEN" if refused.status_code == 403 else "UNAUTHORIZED"
            raise Refused(code, str(refused.detail or "Sign in first.")) from None
        return _principal(said)

    return identify


def _principal(said: Any) -> Principal | None:
    """A string, a `{"identity": ..., "permissions": [...]}`, or a user object with `identity` and `permissions`."""
    if said is None or isinstance(said, str):
        return Principal(said) if said else None
    identity = said.get("identity") if isinstance(said, dict) else getattr(said, "identity", None)
    permissions = said.get("permissions") if isinstance(said, dict) else getattr(said, "permissions", None)
    return Principal(str(identity), frozenset(permissions or ())) if identity else None
