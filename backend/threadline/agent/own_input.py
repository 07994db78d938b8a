"""An agent's own input: what the chat body's `input` may add to the graph's input besides the message.

agents-from-scratch's email assistant starts from `{"email_input": …}`, not from a chat message. A request's
`input` object is merged into the graph's input, checked first against the graph's input schema
(`get_input_jsonschema()`): a key the graph does not take, or a value of the wrong type, is refused naming
it; a key it needs is asked for until a message gives it (the agent's state keeps it). Where that schema cannot
be built (a `typing.TypedDict` input on Python 3.11 makes it raise), the input's type hints give it, key by key.
`messages` is never the request's: the chat gives it.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import TypeAdapter
from typing_extensions import is_typeddict

from threadline.agent.loading import AgentGraph

MESSAGES = "messages"


class InputCheck:
    """Which keys a graph's input takes, which of them it needs, and of which JSON schema each (where it can be
    known)."""

    def __init__(self, agent: AgentGraph | None, text_input: str = MESSAGES) -> None:
        """`text_input`: the key the chat message fills (a graph without `messages` names one of its own)."""
        self.keys: frozenset[str] = frozenset()
        self.required: frozenset[str] = frozenset()  # keys without a default: the first message must give them
        self.validators: dict[str, Draft202012Validator] = {}
        self.text_input = text_input
        if agent is None:  # the built-in agent takes the chat message only
            return
        schema = input_schema(agent)
        definitions = schema.get("$defs", {})
        for key, property_schema in schema.get("properties", {}).items():
            if key in (MESSAGES, text_input):
                continue
            try:
                self.validators[key] = Draft202012Validator({**property_schema, "$defs": definitions})
            except SchemaError:
                self.validators[key] = Draft202012Validator({})
        self.keys = frozenset(self.validators)
        # LangGraph itself requires no key; a graph that declares an input schema apart from its state (the email
        # assistant's `StateInput`, data-enrichment's `InputState`) says what it starts from.
        builder = getattr(agent, "builder", None)
        if builder is not None and getattr(builder, "input_schema", None) is not getattr(builder, "state_schema", None):
            self.required = frozenset(schema.get("required", ())) & self.keys

    def problem(self, values: Mapping[str, Any]) -> str | None:
        """What is wrong with a request's `input`, naming the key; None when the graph takes all of it."""
        if (key := MESSAGES if MESSAGES in values else self.text_input) in values:
            return f"`{key}` comes from the chat: send the message as the last of `messages`"
        if unknown := sorted(set(values) - self.keys):
            takes = ", ".join(sorted(self.keys)) or "nothing besides the message"
            return f"the agent's input has no {', '.join(unknown)} (it takes {takes})"
        for key, value in values.items():
            validator = self.validators.get(key)
            error = next(iter(validator.iter_errors(value)), None) if validator else None
            if error is not None:
                where = "".join(f"[{step!r}]" for step in error.absolute_path)
                return f"{key}{where}: {error.message}"[:300]
        return None

    def missing(self, given: Iterable[str]) -> str | None:
        """What the agent's input still needs, given these keys (the request's and those its state kept)."""
        if lacking := sorted(self.required - set(given)):
            return f"the agent's input needs {', '.join(lacking)}: send it in the chat body's `input`"
        return None


def input_schema(agent: AgentGraph) -> dict[str, Any]:
    """The graph's input as JSON schema: LangGraph's, else (a `typing.TypedDict` on Python 3.11) its type hints'."""
    try:
        return agent.get_input_jsonschema()
    except Exception:  # noqa: BLE001 - whatever keeps Pydantic from building it, the type hints decide
        return _schema_of_hints(agent)


def _schema_of_hints(agent: AgentGraph) -> dict[str, Any]:
    """The input's JSON schema from its type hints, key by key: a key whose type has no JSON schema takes any value."""
    builder = getattr(agent, "builder", None)
    schema_type = getattr(builder, "input_schema", None)
    try:
        hints = typing.get_type_hints(schema_type) if schema_type is not None else {}
    except Exception:  # noqa: BLE001 - hints that do not resolve: the input channels decide, any value goes
        channels = agent.input_channels
        hints = {key: Any for key in ([channels] if isinstance(channels, str) else channels)}
    properties = {key: _json_schema(hint) for key, hint in hints.items()}
    required: frozenset[str] = getattr(schema_type, "__required_keys__", frozenset())
    return {"properties": properties, "required": sorted(required & properties.keys())}


def _json_schema(hint: Any) -> dict[str, Any]:
    """A type's JSON schema: Pydantic's, and a TypedDict's (which Pydantic refuses from `typing` on Python 3.11)
    field by field; a type that has none takes any value."""
    if is_typeddict(hint):
        fields = typing.get_type_hints(hint)
        return {
            "type": "object",
            "properties": {name: _json_schema(field) for name, field in fields.items()},
            "required": sorted(hint.__required_keys__),
        }
    try:
        return TypeAdapter(hint).json_schema()
    except Exception:  # noqa: BLE001 - no JSON schema for it (an arbitrary class, say): any value
        return {}
