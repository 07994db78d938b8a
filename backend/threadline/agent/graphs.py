"""The agent behind one narrow interface: a compiled graph per model profile, which the answers run.

An answer gives its graph the new user message (a `TurnRequest`), the conversation's thread and the
profile's `AgentContext`, and reads the LangGraph stream back (answers/runner.py); nothing else of the
agent is seen from above. The graph is the built-in one, or a team's own (THREADLINE_GRAPH) hosted in
threadline's (agent/hosting.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from threadline.agent.actions import load_actions
from threadline.agent.attachments import FileReader
from threadline.agent.context import AgentContext
from threadline.agent.graph import Graph, GraphOptions, build_graph
from threadline.agent.hosting import host_graph
from threadline.agent.loading import AgentGraph, AgentLoadError, AgentSource, agent_graph, load_source
from threadline.agent.models import build_chat_model, profiles_of
from threadline.agent.own_context import ContextProblem, OwnContext, own_schema
from threadline.agent.own_input import InputCheck
from threadline.agent.profiles import Profile, default_of
from threadline.agent.suggestions import Suggester
from threadline.agent.tool_inputs import ToolInfo, tool_infos
from threadline.settings import Settings


def load_agent(settings: Settings) -> AgentSource | None:
    """The team's agent THREADLINE_GRAPH names, checked by building it once for the default profile; None
    without the setting. Raises AgentLoadError with one line for the operator."""
    if settings.graph is None:
        return None
    source = load_source(settings.graph)
    profile = default_of(profiles_of(settings))
    agent = agent_graph(source, AgentContext(model=build_chat_model(profile, settings), profile=profile.id))
    own_context_of(agent, settings)
    return source


def own_context_of(agent: AgentGraph, settings: Settings) -> OwnContext | None:
    """How the agent's own context is made, when its graph declares one; AgentLoadError when the operator's
    values cannot make it."""
    schema = own_schema(agent.context_schema)
    try:
        return OwnContext(schema, settings.graph_context, settings.request_context) if schema else None
    except ContextProblem as problem:
        raise AgentLoadError(str(problem)) from None


class GraphSwitch:
    """A compiled conversation graph per model profile, compiled again whenever the tool servers' tools change.

    All share the checkpointer and the state's shape, so any of them reads and closes any conversation;
    they differ in the model and the system prompt."""

    def __init__(
        self,
        profiles: tuple[Profile, ...],
        checkpointer: BaseCheckpointSaver[Any],
        settings: Settings,
        agent: AgentSource | None = None,
        files: FileReader | None = None,
        store: BaseStore | None = None,
    ) -> None:
        self.profiles = {profile.id: profile for profile in profiles}
        self.files = files or FileReader()  # attached files, for the model calls
        self.default = default_of(profiles)
        self.models = {profile.id: build_chat_model(profile, settings) for profile in profiles}
        self.actions = load_actions(settings.actions, [profile.id for profile in profiles])
        self.checkpointer = checkpointer
        self.store = store or InMemoryStore()  # the agents' long-term memory (runtime.store), across conversations
        self.settings = settings
        self.graphs: dict[str, Graph] = {}
        self.tools: dict[str, ToolInfo] = {}  # each tool's title and input check, for the wires
        self.titles: dict[str, str] = {}  # the tools that have a title, for a conversation's history
        self.agent = agent  # a team's own agent (THREADLINE_GRAPH), else None: the built-in graph
        self.contexts: dict[str, AgentContext] = {}  # each profile's, without a visitor or conversation
        self.own_context: OwnContext | None = None  # how the agent's own context_schema is made, if it has one
        self.own_input = InputCheck(None)  # which keys of its own input the agent takes besides the message
        self.subgraphs: frozenset[str] = frozenset()  # the agent's declared subgraphs, as `a|b` paths

    @property
    def current(self) -> Graph:
        """The default profile's graph (every graph reads and writes conversations alike)."""
        return self.of(self.default.id)

    def of(self, profile_id: str) -> Graph:
        assert self.graphs, "compiled when the tool servers are first listed, before serving starts"
        return self.graphs[profile_id]

    @property
    def hosted(self) -> bool:
        return self.agent is not None

    def context_for(
        self, profile_id: str, visitor_id: str, conversation_id: str, request_context: Mapping[str, Any]
    ) -> AgentContext:
        """The runtime context of one answer on this profile."""
        return replace(
            self.contexts[profile_id],
            visitor_id=visitor_id,
            conversation_id=conversation_id,
            request_context=request_context,
        )

    def context_problem(self, request_context: Mapping[str, Any]) -> str | None:
        """Why the chat body's `context` values cannot make the agent's own context, else None."""
        if self.own_context is None:
            return None
        try:
            self.own_context.build(request_context, "")
        except ContextProblem as problem:
            return str(problem)
        return None

    def use_tools(self, tools: Sequence[BaseTool]) -> None:
        """An answer already running keeps the graph it started with; the next one gets the new tools."""
        self.tools = tool_infos(tools)
        self.titles = {name: info.title for name, info in self.tools.items() if info.title}
        self.contexts = {
            profile.id: AgentContext(
                model=self.models[profile.id],
                tools=tuple(tools),
                profile=profile.id,
                system_prompt=profile.system_prompt or self.settings.system_prompt,
                max_model_calls=self.settings.max_model_calls,
            )
            for profile in self.profiles.values()
        }
        self.graphs = {profile.id: self._compile(profile, tools) for profile in self.profiles.values()}

    def _compile(self, profile: Profile, tools: Sequence[BaseTool]) -> Graph:
        model = self.models[profile.id]
        suggester = Suggester(model, self.actions) if profile.suggests else None
        if self.agent is not None:
            agent = agent_graph(self.agent, self.contexts[profile.id])
            self.own_context = own_context_of(agent, self.settings)
            self.own_input = InputCheck(agent)
            self.subgraphs = frozenset(name for name, _ in agent.get_subgraphs(recurse=True))
            return host_graph(agent, self.own_context, self.checkpointer, self.store, suggester, self.files)
        options = GraphOptions(
            system_prompt=self.contexts[profile.id].system_prompt,
            max_model_calls=self.settings.max_model_calls,
            context_limit=profile.context_limit,
            require_approval=profile.require_approval,
            auto_approve=profile.auto_approve,
            suggester=suggester,
            files=self.files,
        )
        return build_graph(model, tools, self.checkpointer, options, self.store)
