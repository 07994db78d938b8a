"""The agents' settings: the team's own graph and its context, the built-in agent's prompt and budget, the
server actions, and the prompts the page offers."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec

from threadline.settings.reading import Section, comma_list, env, json_object, json_strings

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant. Use the tools you have when they help, and answer concisely."


class AgentSettings(Section, frozen=True, kw_only=True):
    TITLE: ClassVar[str] = "Agents"

    graph: Annotated[
        str | None,
        env(
            "THREADLINE_GRAPH",
            help="your own LangGraph agent, `path/to/file.py:name` or `package.module:name`: a `StateGraph`, a "
            "compiled graph, or a factory given an `AgentContext`; or a `langgraph.json` (`path/langgraph.json[:id]`) "
            "(see [Your own agent](../guides/agents.md)); unset, the built-in agent answers",
        ),
    ] = None
    graph_context: Annotated[
        dict[str, Any],
        env(
            "THREADLINE_GRAPH_CONTEXT",
            help="values of your graph's own `context_schema`, a JSON object, given to every run (see "
            "[Your own agent](../guides/agents.md#its-own-context))",
            read=json_object,
            default="none",
        ),
    ] = msgspec.field(default_factory=dict)
    request_context: Annotated[
        tuple[str, ...],
        env(
            "THREADLINE_REQUEST_CONTEXT",
            help="the keys of your graph's context a chat request may set (its body's `context`), comma-separated; "
            "never `user_id`, which is always who asks",
            read=comma_list,
            default="none",
        ),
    ] = ()
    system_prompt: Annotated[
        str,
        env(
            "CHAT_SYSTEM_PROMPT",
            help="the system prompt, applied to every model call",
            default="a short helpful-assistant prompt",
        ),
    ] = DEFAULT_SYSTEM_PROMPT
    max_model_calls: Annotated[
        int,
        msgspec.Meta(ge=1, le=50),
        env(
            "CHAT_MAX_MODEL_CALLS",
            help="model calls per answer before the server stops the tool loop with a clear final message",
        ),
    ] = 5
    actions: Annotated[
        tuple[str, ...],
        env(
            "CHAT_ACTIONS",
            help="the application's server actions, `module:attribute,…` (see "
            "[Suggested replies and actions](../guides/suggestions.md))",
        ),
    ] = ()
    starters: Annotated[
        tuple[str, ...],
        env(
            "CHAT_STARTERS",
            help="the prompts the page offers in an empty conversation, a JSON array of strings (a profile's "
            "`starters` win for it); else the demo model's commands with the demo model, general ones otherwise",
            read=json_strings,
            default="by model",
        ),
    ] = ()
