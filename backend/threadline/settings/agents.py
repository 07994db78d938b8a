"""The agents' section of the settings: what the conversation graphs are compiled with (the models, the team's
own graph and its context, the built-in agent's prompt and budget, the server actions)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from threadline.settings import AgentLimits, Section, Settings
from threadline.settings.models import ModelSettings


@dataclass(frozen=True)
class AgentSettings(Section):
    models: ModelSettings
    graph: str | None  # THREADLINE_GRAPH; None: the built-in agent
    graph_context: dict[str, Any]  # THREADLINE_GRAPH_CONTEXT
    request_context: tuple[str, ...]  # THREADLINE_REQUEST_CONTEXT
    system_prompt: str  # CHAT_SYSTEM_PROMPT, unless a profile has its own
    max_model_calls: int  # CHAT_MAX_MODEL_CALLS
    actions: tuple[str, ...]  # CHAT_ACTIONS
    agent_timeouts: dict[str, AgentLimits]  # THREADLINE_AGENT_TIMEOUTS: its keys must be agents served

    @classmethod
    def of(cls, settings: Settings) -> AgentSettings:
        return cls(
            ModelSettings.of(settings),
            settings.graph,
            settings.graph_context,
            settings.request_context,
            settings.system_prompt,
            settings.max_model_calls,
            settings.actions,
            settings.agent_timeouts,
        )
