"""What threadline gives every agent: LangGraph runtime context, typed, the same for every run.

A custom graph (THREADLINE_GRAPH) reads it in any node as `runtime.context` (declare
`context_schema=AgentContext` to have it typed), so the conversation's profile decides the model,
the MCP servers' tools are at hand, and the limits are the server's:

    from langchain.agents import create_agent
    from threadline.agent.context import AgentContext

    def graph(context: AgentContext):
        return create_agent(context.model, context.tools, system_prompt=context.system_prompt,
                            context_schema=AgentContext)

A factory like this one is called once per profile (and again when the tool servers' tools change),
with empty visitor and conversation ids; each run's context has them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool


@dataclass(frozen=True)
class AgentContext:
    """The run's model profile, its chat model and tools, who asks, and the per-answer limits."""

    model: BaseChatModel  # the conversation's profile's chat model (the offline demo model by default)
    tools: tuple[BaseTool, ...] = ()  # the MCP servers' tools, as LangChain tools
    profile: str = "default"  # the model profile's id: A/B comparisons run the same agent on two profiles
    system_prompt: str = ""  # the profile's system prompt, else CHAT_SYSTEM_PROMPT
    max_model_calls: int = 5  # CHAT_MAX_MODEL_CALLS: model calls one answer may make
    visitor_id: str = ""  # whose conversation this is
    conversation_id: str = ""
    # The chat body's `context`, limited to the keys THREADLINE_REQUEST_CONTEXT lists (agent/own_context.py).
    request_context: Mapping[str, Any] = field(default_factory=dict)
