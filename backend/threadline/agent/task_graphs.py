"""A graph without `messages`, served as a chat agent: the message goes to its text input, its output is the answer.

local-deep-researcher takes `research_topic` and gives `running_summary`; data-enrichment takes `topic` (and an
`extraction_schema`, from the chat body's `input`) and gives `info`. LangGraph Studio and the Agent Server run
such graphs with a form; here the chat message fills the graph's one text input (a string in its input schema),
the output's text fields, joined, are the answer's text, and the whole output is its `data-structured-response`
part, live and in the history. A graph that works in `messages` without taking them as input, and has one text
input (data-enrichment's state has them, its input schema has `topic` and not them), is such a graph too: the
messages its run adds (its tool calls and their results) come before the answer, live and in the history. The
transcript keeps both sides as for any agent. The graph's model calls are its work, not the answer: their tokens
are hidden (agent/hosting.py tags its run `langsmith:nostream`), and its nodes show as the answer's status. A
graph with no text input, or several, cannot be mapped, and is refused naming them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from threadline.agent.loading import AgentGraph, NoMessages
from threadline.agent.own_input import input_schema

HIDDEN_RUN = "langsmith:nostream"  # what the graph's model calls are tagged with: its work, not the answer


@dataclass(frozen=True)
class TaskGraph:
    """How a graph without `messages` takes a chat message and answers it."""

    text_input: str  # the input key the message's text goes to
    works_in_messages: bool = False  # its state has `messages`, its input does not

    @classmethod
    def of(cls, agent: AgentGraph) -> TaskGraph | None:
        """None for a chat agent: one that takes `messages`, or works in them and has no one text input (the email
        assistant takes `email_input`, and the chat message as `messages`). NoMessages when it cannot be mapped."""
        properties = input_schema(agent).get("properties", {})
        texts = sorted(key for key, schema in properties.items() if _is_text(schema))
        works_in_messages = "messages" in agent.channels
        if works_in_messages and ("messages" in properties or len(texts) != 1):
            return None
        if len(texts) != 1:
            found = f"text inputs {', '.join(texts)}" if texts else "no text input"
            raise NoMessages(
                f"THREADLINE_GRAPH: the graph has no `messages` state key and {found} for the chat message "
                f"(its input: {', '.join(properties) or 'nothing'}); give it one string input, or a `messages` key "
                "(MessagesState or LangChain's AgentState have one)"
            )
        return cls(texts[0], works_in_messages)

    def graph_input(self, transcript: list[AnyMessage], carried: dict[str, Any]) -> dict[str, Any]:
        """The run's input: what its state kept and the chat body gave, with the person's last message as the text."""
        question = next((message for message in reversed(transcript) if isinstance(message, HumanMessage)), None)
        return {**carried, self.text_input: question.text if question is not None else ""}

    @staticmethod
    def answer(output: dict[str, Any], before: list[AnyMessage]) -> list[AnyMessage]:
        """The messages its run added to what it had `before` (not those it wrote as a human), then the output's text
        fields, in its order, as the answer's text."""
        known = {message.id for message in before}
        worked = [m for m in output.get("messages", ()) if m.id not in known and not isinstance(m, HumanMessage)]
        said = (value for key, value in output.items() if key != "messages" and isinstance(value, str))
        return [*worked, AIMessage("\n\n".join(value for value in said if value.strip()))]


def _is_text(schema: dict[str, Any]) -> bool:
    """A string, or an optional one (`str | None`, a dataclass field that defaults to None)."""
    kinds = [schema, *schema.get("anyOf", ())]
    return any(kind.get("type") == "string" for kind in kinds)
