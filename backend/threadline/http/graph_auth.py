"""A langgraph.json's `auth`: its `@auth.authenticate` handler names the caller, as `Threadline(identify=...)` does,
and its `@auth.on` handlers for threads decide what the caller may do with a conversation.

open_deep_research declares `"auth": {"path": "./src/security/auth.py:auth"}`, a `langgraph_sdk.Auth` whose
authenticate handler checks the bearer token and returns the user. LangGraph's server calls it with the request's
parts its parameters name (`authorization`, `headers`, `path`, `method`, `request`); a string, a dict with an
`identity`, or a user object with one is the caller, its `permissions` are roles; an `Auth.exceptions.HTTPException`
refuses the request with its status. Every conversation is then its caller's own, as with any login.

The handlers are chosen as LangGraph's server chooses them, the most specific first (`@auth.on.threads.read`, then
`@auth.on.threads`, then `@auth.on`), and asked at the same moments (answers/thread_access.py). Handlers for
assistants, the store or crons guard APIs threadline does not serve (it lists the file's graphs to every caller, and
has no store or cron API): start-up names them, so nobody believes them in force.
"""

from __future__ import annotations

import contextvars
import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph_sdk import Auth
from langgraph_sdk.auth.types import AuthContext
from litestar.connection import ASGIConnection

from threadline.agent.langgraph_json import auth_target
from threadline.agent.loading import AgentLoadError, load_source
from threadline.answers.thread_access import Action, Decide
from threadline.http.host_identity import Identify, Principal
from threadline.refusals import RefusalCode, Refused

log = logging.getLogger(__name__)

# The caller as the authenticate handler returned it, for the `@auth.on` handlers' `ctx.user`: set by `identify`
# in the request's own task, before its route runs.
caller: contextvars.ContextVar[AuthUser | None] = contextvars.ContextVar("graph_auth_caller", default=None)


@dataclass(frozen=True)
class GraphAuth:
    """Who asks (`identify`), and what the handlers say they may do with a conversation (`decide`)."""

    identify: Identify
    decide: Decide | None


def graph_auth(graph: str | None) -> GraphAuth | None:
    """The langgraph.json's auth; None when THREADLINE_GRAPH has no `auth`."""
    if graph is None or (target := auth_target(graph)) is None:
        return None
    auth = load_source(target)
    if not isinstance(auth, Auth):
        raise AgentLoadError(f"THREADLINE_GRAPH: the auth {target} is a {type(auth).__name__}, not langgraph_sdk.Auth")
    if (authenticate := auth._authenticate_handler) is None:
        raise AgentLoadError(f"THREADLINE_GRAPH: the auth {target} has no @auth.authenticate handler to name callers")
    if elsewhere := sorted(f"{resource}.{action}" for resource, action in auth._handlers if resource != "threads"):
        log.warning(
            "the auth's @auth.on handlers %s guard what threadline does not serve (it lists its agents to every "
            "caller, and has no assistant, store or cron API): they are not run",
            ", ".join(elsewhere),
        )
    ruled = any(resource == "threads" for resource, _ in auth._handlers) or bool(auth._global_handlers)
    return GraphAuth(_identify_with(authenticate), _decide_with(auth) if ruled else None)


def _decide_with(auth: Auth) -> Decide:
    async def decide(action: Action, value: dict[str, Any]) -> Mapping[str, Any] | None:
        handlers = auth._handlers
        chosen = handlers.get(("threads", action)) or handlers.get(("threads", "*")) or auth._global_handlers
        if not chosen:
            return None  # LangGraph's server accepts what no handler covers
        user = caller.get() or AuthUser({"identity": ""}, authenticated=False)
        context = AuthContext(permissions=user.permissions, user=user, resource="threads", action=action)
        try:
            said = await chosen[-1](ctx=context, value=value)
        except Auth.exceptions.HTTPException as refused:
            raise Refused(_code(refused.status_code), str(refused.detail or "Not allowed.")) from None
        if said is False:
            raise Refused("FORBIDDEN", "Not allowed.")
        return said if isinstance(said, Mapping) else None

    return decide


def _code(status: int) -> RefusalCode:
    return {401: "UNAUTHORIZED", 404: "NOT_FOUND"}.get(status, "FORBIDDEN")  # type: ignore[return-value]


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
        principal = _principal(said)
        caller.set(AuthUser.of(said) if principal else None)
        return principal

    return identify


def _principal(said: Any) -> Principal | None:
    """A string, a `{"identity": ..., "permissions": [...]}`, or a user object with `identity` and `permissions`."""
    if said is None or isinstance(said, str):
        return Principal(said) if said else None
    identity = said.get("identity") if isinstance(said, dict) else getattr(said, "identity", None)
    permissions = said.get("permissions") if isinstance(said, dict) else getattr(said, "permissions", None)
    return Principal(str(identity), frozenset(permissions or ())) if identity else None


class AuthUser:
    """The caller as the `@auth.on` handlers see it (`ctx.user`): `identity`, `permissions`, `is_authenticated`,
    `display_name`, and whatever else the authenticate handler returned, by attribute or by key."""

    def __init__(self, said: Mapping[str, Any], *, authenticated: bool = True, own: Any = None) -> None:
        self._said = dict(said)
        self._own = own
        self.is_authenticated = authenticated

    @classmethod
    def of(cls, said: Any) -> AuthUser:
        if isinstance(said, str):
            return cls({"identity": said})
        if isinstance(said, Mapping):
            return cls(said)
        fields = {"identity": said.identity, "permissions": list(getattr(said, "permissions", []) or [])}
        return cls(fields, own=said)

    @property
    def identity(self) -> str:
        return str(self._said.get("identity", ""))

    @property
    def permissions(self) -> list[str]:
        return list(self._said.get("permissions") or [])

    @property
    def display_name(self) -> str:
        return str(self._said.get("display_name") or self.identity)

    def __getitem__(self, key: str) -> Any:
        return self._said[key] if self._own is None else getattr(self._own, key)

    def __getattr__(self, name: str) -> Any:
        said = self.__dict__.get("_said", {})
        if name in said:
            return said[name]
        own = self.__dict__.get("_own")
        if own is not None:
            return getattr(own, name)
        raise AttributeError(name)
