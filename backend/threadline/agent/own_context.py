"""An agent's own runtime context: the object a graph's `context_schema` declares, built for every run.

The ReAct template reads `runtime.context.model` as a "provider/model" string, the LangChain quickstart
`runtime.context.user_id`: such a graph is given its own schema's object, never threadline's AgentContext.
Its values, last wins: the schema's defaults, the operator's THREADLINE_GRAPH_CONTEXT, the chat body's
`context` for the keys THREADLINE_REQUEST_CONTEXT lists, and a declared `user_id`, which is always the id of
who asks (a client can never choose it). threadline's own context stays reachable through `threadline_context()`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

import msgspec

from threadline.agent.context import AgentContext

USER_ID = "user_id"  # always who asks: the signed-in user's id, else the anonymous visitor's
CURRENT: ContextVar[AgentContext | None] = ContextVar("threadline_context", default=None)


class ContextProblem(ValueError):
    """The values do not make the agent's context; the message names the key."""


def threadline_context() -> AgentContext:
    """threadline's context of the running answer (the profile's model, the MCP tools, who asks, where), for an
    agent whose `runtime.context` is its own. Raises LookupError outside an answer."""
    context = CURRENT.get()
    if context is None:
        raise LookupError("threadline_context() is only set while threadline runs an answer")
    return context


def own_schema(schema: Any) -> type | None:
    """The graph's context schema when it is the agent's own; None for none, or for threadline's AgentContext."""
    return schema if isinstance(schema, type) and not issubclass(schema, AgentContext) else None


def field_names(schema: type) -> frozenset[str]:
    if dataclasses.is_dataclass(schema):
        return frozenset(field.name for field in dataclasses.fields(schema) if field.init)
    if isinstance(fields := getattr(schema, "model_fields", None), Mapping):  # a pydantic model
        return frozenset(fields)
    return frozenset(name for klass in reversed(schema.__mro__) for name in getattr(klass, "__annotations__", {}))


class OwnContext:
    """How one graph's own context object is made: checked once at start-up against the operator's values."""

    def __init__(self, schema: type, operator_values: Mapping[str, Any], request_keys: tuple[str, ...]) -> None:
        self.schema = schema
        self.names = field_names(schema)
        self.operator_values = dict(operator_values)
        given = (("THREADLINE_GRAPH_CONTEXT", self.operator_values), ("THREADLINE_REQUEST_CONTEXT", request_keys))
        for setting, keys in given:
            if unknown := sorted(set(keys) - self.names):
                raise ContextProblem(f"{setting}: the graph's context {schema.__name__} has no {', '.join(unknown)}")
        if USER_ID in self.operator_values:
            raise ContextProblem("THREADLINE_GRAPH_CONTEXT cannot set user_id: it is always the id of who asks")
        self.build({}, "")  # the operator's values and the defaults make a context, or start-up stops here

    def build(self, request_values: Mapping[str, Any], user_id: str) -> Any:
        """The run's context object; request values are the chat body's, already limited to the listed keys."""
        values = {**self.operator_values, **request_values}
        if USER_ID in self.names:
            values[USER_ID] = user_id
        try:
            if callable(validate := getattr(self.schema, "model_validate", None)):  # a pydantic model checks itself
                return validate(values)
            return msgspec.convert(values, self.schema)  # strict: a request's "7" is not an int
        except msgspec.ValidationError as error:
            raise ContextProblem(str(error).replace("$.", "")) from None
        except TypeError:  # a field msgspec cannot check (of any class): the schema's own constructor decides
            pass
        except Exception as error:  # pydantic's ValidationError, whatever its version
            raise ContextProblem(" ".join(str(error).split())[:300]) from error
        try:
            return self.schema(**values)
        except Exception as error:
            raise ContextProblem(" ".join(str(error).split())[:300]) from error
