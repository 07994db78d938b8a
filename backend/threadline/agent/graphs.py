"""The agent behind one narrow interface: a compiled graph per model profile, which the answers run.

An answer gives its graph the new user message (a `TurnRequest`) and the conversation's thread, and reads
the LangGraph stream back (answers/runner.py); nothing else of the agent is seen from above.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver

from threadline.agent.actions import load_actions
from threadline.agent.graph import Graph, GraphOptions, build_graph
from threadline.agent.models import build_chat_model
from threadline.agent.profiles import Profile, default_of
from threadline.agent.suggestions import Suggester
from threadline.agent.tool_inputs import ToolInfo, tool_infos
from threadline.settings import Settings


class GraphSwitch:
    """A compiled conversation graph per model profile, compiled again whenever the tool servers' tools change.

    All share the checkpointer and the state's shape, so any of them reads and closes any conversation;
    they differ in the model and the system prompt."""

    def __init__(
        self, profiles: tuple[Profile, ...], checkpointer: BaseCheckpointSaver[Any], settings: Settings
    ) -> None:
        self.profiles = {profile.id: profile for profile in profiles}
        self.default = default_of(profiles)
        self.models = {profile.id: build_chat_model(profile, settings) for profile in profiles}
        self.actions = load_actions(settings.actions, [profile.id for profile in profiles])
        self.checkpointer = checkpointer
        self.settings = settings
        self.graphs: dict[str, Graph] = {}
        self.tools: dict[str, ToolInfo] = {}  # each tool's title and input check, for the wires
        self.titles: dict[str, str] = {}  # the tools that have a title, for a conversation's history

    @property
    def current(self) -> Graph:
        """The default profile's graph (every graph reads and writes conversations alike)."""
        return self.of(self.default.id)

    def of(self, profile_id: str) -> Graph:
        assert self.graphs, "compiled when the tool servers are first listed, before serving starts"
        return self.graphs[profile_id]

    def use_tools(self, tools: Sequence[BaseTool]) -> None:
        """An answer already running keeps the graph it started with; the next one gets the new tools."""
        self.tools = tool_infos(tools)
        self.titles = {name: info.title for name, info in self.tools.items() if info.title}
        self.graphs = {
            profile.id: build_graph(
                self.models[profile.id],
                tools,
                self.checkpointer,
                GraphOptions(
                    system_prompt=profile.system_prompt or self.settings.system_prompt,
                    max_model_calls=self.settings.max_model_calls,
                    context_limit=profile.context_limit,
                    require_approval=profile.require_approval,
                    auto_approve=profile.auto_approve,
                    suggester=Suggester(self.models[profile.id], self.actions) if profile.suggests else None,
                ),
            )
            for profile in self.profiles.values()
        }
