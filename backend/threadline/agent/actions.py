"""The actions an answer may suggest as buttons: the application's registry, and the built-in ones.

An action is run by the page (`handler="client"`: `new_chat`, `copy_answer`) or by the server
(`handler="server"`: POST /api/actions calls its `run`). A server action either answers with a result,
or continues the conversation: a new message on the person's behalf, or the last answer again with
another profile, streamed like any answer. The model may only suggest what is registered here, with
`data` its schema accepts (agent/suggestions.py checks); and POST /api/actions runs a server action only as an
answer suggested it, with that data, unless the action is `free_form`.

An application registers its own as `Action` objects (or lists of them), named in CHAT_ACTIONS as
`module:attribute`, or published under the `threadline.actions` entry point group of its package.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Literal

from threadline.agent.tool_inputs import schema_checker

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "threadline.actions"
NO_DATA: Mapping[str, Any] = {"type": "object", "additionalProperties": False}


@dataclass(frozen=True)
class ActionCall:
    """One press of a server action's button: whose, under which answer, with what data."""

    client_id: str
    conversation_id: str
    message_id: str  # the answer that suggested it
    answer_text: str
    data: dict[str, Any]


@dataclass(frozen=True)
class ActionResult:
    """The action is done: `result` is the JSON answer, `message` what the page tells the person."""

    result: dict[str, Any] = field(default_factory=dict)
    message: str = ""


@dataclass(frozen=True)
class ContinueConversation:
    """The action goes on with the conversation: `text` sent as the person's next message, or, with
    `regenerate`, the last answer written again (by `profile_id`, when given)."""

    text: str = ""
    regenerate: bool = False
    profile_id: str | None = None


Outcome = ActionResult | ContinueConversation


@dataclass(frozen=True)
class Action:
    name: str
    description: str  # what the model reads when it chooses suggestions
    handler: Literal["client", "server"] = "server"
    schema: Mapping[str, Any] = field(default_factory=lambda: NO_DATA)  # JSON schema of `data`
    run: Callable[[ActionCall], Awaitable[Outcome]] | None = None  # a server action's handler
    # A server action runs only as an answer suggested it, name and data, unless it is free-form: then any
    # `data` its schema accepts (a form the page fills in, say).
    free_form: bool = False

    def __post_init__(self) -> None:
        if (self.run is None) != (self.handler == "client"):
            raise ValueError(f"action {self.name!r}: a server action needs `run`, a client action has none")


async def _summarize(call: ActionCall) -> Outcome:
    return ContinueConversation(text=SUMMARIZE_REQUEST)


async def _retry(call: ActionCall) -> Outcome:
    return ContinueConversation(regenerate=True, profile_id=call.data["profile"])


SUMMARIZE_REQUEST = "Summarize our conversation so far."


def builtin_actions(profile_ids: Sequence[str]) -> list[Action]:
    """`retry_with_profile` exists only when there is another profile to retry with."""
    actions = [
        Action("new_chat", "Open a new, empty conversation.", handler="client"),
        Action("copy_answer", "Copy this answer's text to the clipboard.", handler="client"),
        Action(
            "summarize_conversation",
            "Write a short summary of the whole conversation as the next answer.",
            run=_summarize,
        ),
    ]
    if len(profile_ids) > 1:
        actions.append(
            Action(
                "retry_with_profile",
                "Write the last answer again with another model profile.",
                schema={
                    "type": "object",
                    "properties": {"profile": {"enum": list(profile_ids)}},
                    "required": ["profile"],
                    "additionalProperties": False,
                },
                run=_retry,
            )
        )
    return actions


class ActionRegistry:
    def __init__(self, actions: Iterable[Action]) -> None:
        self.actions: dict[str, Action] = {}
        for action in actions:
            if action.name in self.actions:
                log.warning("action %r registered twice: the later one is used", action.name)
            self.actions[action.name] = action
        self._checks = {name: schema_checker(dict(action.schema)) for name, action in self.actions.items()}

    def get(self, name: str) -> Action | None:
        return self.actions.get(name)

    def problem(self, name: str, handler: str, data: Any) -> str | None:
        """Why `name` with `data` cannot be run by `handler`; None when it can."""
        action = self.actions.get(name)
        if action is None:
            return f"there is no action named {name!r}"
        if action.handler != handler:
            return f"{name!r} is a {action.handler} action"
        return self._checks[name]({} if data is None else data)

    def catalog(self) -> list[dict[str, Any]]:
        """What the model is told it may suggest."""
        return [
            {"action": a.name, "handler": a.handler, "description": a.description, "data_schema": dict(a.schema)}
            for a in self.actions.values()
        ]


def _imported(spec: str) -> Iterable[Action]:
    module, _, attribute = spec.partition(":")
    found = getattr(importlib.import_module(module.strip()), attribute.strip())
    return [found] if isinstance(found, Action) else list(found)


def load_actions(specs: Sequence[str], profile_ids: Sequence[str]) -> ActionRegistry:
    """The built-in actions, then those of installed packages' entry points, then CHAT_ACTIONS' (later wins)."""
    actions = builtin_actions(profile_ids)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        loaded = entry.load()
        actions += [loaded] if isinstance(loaded, Action) else list(loaded)
    for spec in specs:
        actions += _imported(spec)
    return ActionRegistry(actions)
