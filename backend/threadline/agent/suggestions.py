"""Suggested replies and actions: one more model call after an answer, asking for JSON, checked before use.

The call sees the question, the answer and the registered actions (agent/actions.py), and is kept out of the
streamed answer. What it returns is checked item by item: a reply without a label, an action that is
not registered, or data its schema refuses is dropped and logged, so nothing broken reaches a page.
A failed or unreadable call means no suggestions, never a failed answer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import msgspec
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage

from threadline.agent.actions import ActionRegistry
from threadline.conversations.state import text_and_reasoning
from threadline.events import SuggestedAction, SuggestedValue, Suggestions

log = logging.getLogger(__name__)

MAX_VALUES = 4
MAX_ACTIONS = 3
REQUEST_HEADER = "Suggest what comes next in this chat."  # the demo model and the stand-ins know it
INSTRUCTIONS = f"""You suggest follow-ups for a chat assistant's answer. Reply with one JSON object and nothing else:
{{"suggested_values": [{{"label": "...", "value": "..."}}], "suggested_actions": [{{"label": "...", "action": "...",
"handler": "client" or "server", "data": {{...}}, "style": "primary" or "secondary" or "warning"}}]}}
suggested_values: up to {MAX_VALUES} short replies the user might send next (label: at most 40 characters;
value: the message sent). suggested_actions: up to {MAX_ACTIONS} buttons, only from the actions listed, with data
their data_schema accepts. Suggest nothing (empty lists) when nothing is useful."""

Label = Annotated[str, msgspec.Meta(min_length=1, max_length=80)]


class _Value(msgspec.Struct):
    label: Label
    value: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]


class _Action(msgspec.Struct):
    label: Label
    action: str
    handler: Literal["client", "server"]
    style: Literal["primary", "secondary", "warning"] = "secondary"
    data: dict[str, Any] | None = None


def _items(raw: Any, key: str) -> list[Any]:
    items = raw.get(key) if isinstance(raw, dict) else None
    return items if isinstance(items, list) else []


def checked(raw: Any, actions: ActionRegistry) -> Suggestions:
    """The valid suggestions in what the model returned; each invalid one is logged and left out."""
    values: list[SuggestedValue] = []
    for item in _items(raw, "suggested_values"):
        if len(values) == MAX_VALUES:
            break
        try:
            value = msgspec.convert(item, _Value)
        except msgspec.ValidationError as error:
            log.warning("suggested value dropped: %s", error, extra={"suggestion": repr(item)[:200]})
            continue
        values.append(SuggestedValue(label=value.label.strip(), value=value.value.strip()))
    buttons: list[SuggestedAction] = []
    for item in _items(raw, "suggested_actions"):
        if len(buttons) == MAX_ACTIONS:
            break
        try:
            action = msgspec.convert(item, _Action)
            problem = actions.problem(action.action, action.handler, action.data)
        except msgspec.ValidationError as error:
            problem = str(error)
        if problem is not None:
            log.warning("suggested action dropped: %s", problem, extra={"suggestion": repr(item)[:200]})
            continue
        buttons.append(SuggestedAction(action.label.strip(), action.action, action.handler, action.style, action.data))
    return Suggestions(values=tuple(values), actions=tuple(buttons))


def _json_object(text: str) -> Any:
    """The JSON object in a reply, also when the model wrapped it in prose or a code fence."""
    start, end = text.find("{"), text.rfind("}")
    return json.loads(text[start : end + 1]) if 0 <= start < end else None


def _answer_text(messages: Sequence[AnyMessage]) -> str:
    texts = [text_and_reasoning(message)[0] for message in messages if isinstance(message, AIMessage)]
    return "\n".join(text for text in texts if text)


class Suggester:
    def __init__(self, model: BaseChatModel, actions: ActionRegistry) -> None:
        self.model = model
        self.actions = actions
        self.catalog = json.dumps(actions.catalog(), ensure_ascii=False)

    async def suggest(self, question: str, answer: Sequence[AnyMessage]) -> Suggestions | None:
        """Suggestions for the answer to `question` (`answer`: the messages after it); None when the call fails."""
        exchange = f"User: {question}\nAssistant: {_answer_text(answer)}"
        request = [
            SystemMessage(content=INSTRUCTIONS),
            HumanMessage(content=f"{REQUEST_HEADER}\nActions: {self.catalog}\n{exchange}"),
        ]
        try:
            # "nostream": LangGraph keeps this call's tokens out of the answer it streams.
            reply = await self.model.ainvoke(request, config={"tags": ["nostream"]})
            raw = _json_object(reply.text)
        except Exception as error:  # noqa: BLE001 - suggestions are extras: any failure means none (a stop still ends the answer: CancelledError is not an Exception)
            log.warning("no suggestions: %s", error)
            return None
        return checked(raw, self.actions)
