"""An agent's own input: what the chat body's `input` may add to the graph's input besides the message.

agents-from-scratch's email assistant starts from `{"email_input": …}`, not from a chat message. A request's
`input` object is merged into the graph's input, checked first against the graph's input schema
(`get_input_jsonschema()`): a key the graph does not take, or a value of the wrong type, is refused naming
it. Where that schema cannot be built (a `typing.TypedDict` input on Python 3.11 makes it raise), the
graph's input channels decide which keys it takes. `messages` is never the request's: the chat gives it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from threadline.agent.loading import AgentGraph

MESSAGES = "messages"


class InputCheck:
    """Which keys a graph's input takes, and of which JSON schema each (where it can be known)."""

    def __init__(self, agent: AgentGraph | None) -> None:
        self.keys: frozenset[str] = frozenset()
        self.validators: dict[str, Draft202012Validator] = {}
        if agent is None:  # the built-in agent takes the chat message only
            return
        try:
            schema = agent.get_input_jsonschema()
        except Exception:  # noqa: BLE001 - any failure to build it leaves the input channels to decide
            channels = agent.input_channels
            self.keys = frozenset([channels] if isinstance(channels, str) else channels) - {MESSAGES}
            return
        definitions = schema.get("$defs", {})
        for key, property_schema in schema.get("properties", {}).items():
            if key == MESSAGES:
                continue
            try:
                self.validators[key] = Draft202012Validator({**property_schema, "$defs": definitions})
            except SchemaError:
                self.validators[key] = Draft202012Validator({})
        self.keys = frozenset(self.validators)

    def problem(self, values: Mapping[str, Any]) -> str | None:
        """What is wrong with a request's `input`, naming the key; None when the graph takes all of it."""
        if MESSAGES in values:
            return "`messages` comes from the chat: send the message as the last of `messages`"
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
