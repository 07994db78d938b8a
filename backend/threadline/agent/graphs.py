"""The agent behind one narrow interface: a compiled graph per model profile, which the answers run.

An answer gives its graph the new user message (a `TurnRequest`, as its `TurnInput`), the conversation's thread and the
profile's `AgentContext`, and reads the LangGraph stream back (answers/runner.py); nothing else of the
agent is seen from above. The graph is the built-in one, or a team's own (THREADLINE_GRAPH) hosted in
threadline's (agent/hosting.py).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from threadline.agent.actions import load_actions
from threadline.agent.attachments import FileReader
from threadline.agent.browser_tools import takes_browser_tools
from threadline.agent.context import AgentContext
from threadline.agent.graph import Graph, GraphOptions, build_graph
from threadline.agent.hosting import Hosting, host_graph
from threadline.agent.loading import (
    AgentGraph,
    AgentLoadError,
    AgentSource,
    NoMessages,
    PublicAgent,
    ServedAgent,
    agent_graph,
    load_sources,
)
from threadline.agent.models import build_chat_model, profiles_of
from threadline.agent.own_context import ContextProblem, OwnContext, own_schema
from threadline.agent.own_input import InputCheck
from threadline.agent.suggestions import Suggester
from threadline.agent.task_graphs import TaskGraph
from threadline.agent.tool_inputs import ToolInfo, tool_infos
from threadline.settings import Settings
from threadline.settings.agents import AgentSettings
from threadline.settings.answers import AgentLimits
from threadline.settings.models import ModelSettings
from threadline.settings.profiles import Profile, default_of

log = logging.getLogger(__name__)

DEFAULT_NAME = "LangGraph"  # what LangGraph names a compiled graph that was given no name


def load_agents(settings: Settings, graph: AgentSource | None = None) -> tuple[ServedAgent, ...]:
    """The team's agents: `graph` (a host app's), else those THREADLINE_GRAPH names, each checked by building it
    once for the default profile; none for the built-in agent. Of a langgraph.json's several graphs, one
    without a `messages` key is skipped with one line that names it. Raises AgentLoadError with one line for
    the operator."""
    timeouts = settings.answers.agent_timeouts
    if graph is not None:
        sources = [ServedAgent("agent", graph)]
    elif settings.agents.graph is not None:
        sources = load_sources(settings.agents.graph)
    else:
        _check_limits(timeouts, [BUILT_IN])
        return ()
    profile = default_of(profiles_of(settings.models))
    context = AgentContext(model=build_chat_model(profile, settings.models), profile=profile.id)
    served = []
    for agent in sources:
        try:
            built = agent_graph(agent.source, context)
            TaskGraph.of(built)  # one that cannot be mapped is refused here
        except NoMessages as error:
            if len(sources) == 1:
                raise
            log.warning("graph %r is not served: %s", agent.id, str(error).removeprefix("THREADLINE_GRAPH: "))
            continue
        own_context_of(built, settings.agents)
        served.append(replace(agent, name="" if built.name == DEFAULT_NAME else built.name))
    if not served:
        raise AgentLoadError(f"THREADLINE_GRAPH: none of the graphs of {settings.agents.graph} has a `messages` key")
    _check_limits(timeouts, [agent.id for agent in served])
    return tuple(served)


def _check_limits(timeouts: Mapping[str, AgentLimits], agent_ids: list[str]) -> None:
    """THREADLINE_AGENT_TIMEOUTS names only agents that are served: a misspelt id would leave its limits unused."""
    if unknown := sorted(set(timeouts) - set(agent_ids)):
        raise AgentLoadError(
            f"THREADLINE_AGENT_TIMEOUTS names no agent {', '.join(map(repr, unknown))} "
            f"(the agents are {', '.join(agent_ids)})"
        )


def own_context_of(agent: AgentGraph, settings: AgentSettings) -> OwnContext | None:
    """How the agent's own context is made, when its graph declares one; AgentLoadError when the operator's
    values cannot make it."""
    schema = own_schema(agent.context_schema)
    try:
        return OwnContext(schema, settings.graph_context, settings.request_context) if schema else None
    except ContextProblem as problem:
        raise AgentLoadError(str(problem)) from None


BUILT_IN = "threadline"  # the id of the built-in agent, the one served when THREADLINE_GRAPH is not set


class GraphSwitch:
    """A compiled conversation graph per agent and model profile, compiled again whenever the tool servers'
    tools change.

    All share the checkpointer and the state's shape, so any of them reads and closes any conversation;
    they differ in the agent (a team's own, hosted), the model and the system prompt."""

    def __init__(
        self,
        models: ModelSettings,
        checkpointer: BaseCheckpointSaver[Any],
        settings: AgentSettings,
        agents: Sequence[ServedAgent] = (),
        files: FileReader | None = None,
        store: BaseStore | None = None,
    ) -> None:
        profiles = profiles_of(models)
        self.profiles = {profile.id: profile for profile in profiles}
        self.files = files or FileReader()  # attached files, for the model calls
        self.default = default_of(profiles)
        self.models = {profile.id: build_chat_model(profile, models) for profile in profiles}
        self.actions = load_actions(settings.actions, [profile.id for profile in profiles])
        self.checkpointer = checkpointer
        self.store = store or InMemoryStore()  # the agents' long-term memory (runtime.store), across conversations
        self.settings = settings
        self.agents = {agent.id: agent for agent in agents}  # a team's own (THREADLINE_GRAPH); none: the built-in
        self.default_agent = next(iter(self.agents), BUILT_IN)  # a conversation's agent unless it picks one
        self.graphs: dict[tuple[str, str], Graph] = {}  # by agent id and profile id
        self.hosting: dict[str, Hosting] = {BUILT_IN: Hosting()}  # by agent id
        self.tools: dict[str, ToolInfo] = {}  # each tool's title and input check, for the wires
        self.titles: dict[str, str] = {}  # the tools that have a title, for a conversation's history
        self.contexts: dict[str, AgentContext] = {}  # each profile's, without a visitor or conversation

    @property
    def current(self) -> Graph:
        """The default agent's graph on the default profile (every graph reads and writes conversations alike)."""
        return self.of(self.default.id)

    def of(self, profile_id: str, agent_id: str | None = None) -> Graph:
        assert self.graphs, "compiled when the tool servers are first listed, before serving starts"
        return self.graphs[(agent_id or self.default_agent, profile_id)]

    def hosting_of(self, agent_id: str | None = None) -> Hosting:
        return self.hosting[agent_id or self.default_agent]

    def listed(self) -> list[PublicAgent]:
        """The agents a conversation may pick (GET /api/agents), the default first."""
        if not self.agents:
            return [PublicAgent(BUILT_IN, "threadline", "threadline's built-in agent")]
        return [agent.public() for agent in self.agents.values()]

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

    def context_problem(self, request_context: Mapping[str, Any], agent_id: str | None = None) -> str | None:
        """Why the chat body's `context` values cannot make the agent's own context, else None."""
        if (own_context := self.hosting_of(agent_id).own_context) is None:
            return None
        try:
            own_context.build(request_context, "")
        except ContextProblem as problem:
            return str(problem)
        return None

    def browser_tools_problem(self, names: Sequence[str], agent_id: str | None = None) -> str | None:
        """Why the page's own tools cannot go to this agent (it does not take them, or one is named as one of its
        own tools), else None."""
        hosting = self.hosting_of(agent_id)
        if not hosting.browser_tools:
            return (
                f"agent {agent_id or self.default_agent!r} does not take browser tools "
                "(its create_agent lists no threadline BrowserTools middleware)"
            )
        own = self.tools.keys() if hosting.tool_names is None else hosting.tool_names
        if taken := sorted(set(names) & set(own)):
            return f"{', '.join(map(repr, taken))} is the name of one of the agent's own tools"
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
        self.graphs = {
            (agent_id, profile.id): self._compile(profile, tools, agent_id)
            for agent_id in self.agents or [BUILT_IN]
            for profile in self.profiles.values()
        }

    def _compile(self, profile: Profile, tools: Sequence[BaseTool], agent_id: str) -> Graph:
        model = self.models[profile.id]
        suggester = Suggester(model, self.actions) if profile.suggests else None
        if agent_id != BUILT_IN:
            agent = agent_graph(self.agents[agent_id].source, self.contexts[profile.id])
            own_context = own_context_of(agent, self.settings)
            subgraphs = frozenset(name for name, _ in agent.get_subgraphs(recurse=True))
            task = TaskGraph.of(agent)
            input_check = InputCheck(agent, task.text_input if task else "messages")
            own_tools = getattr(agent.nodes.get("tools"), "bound", None)  # create_agent's ToolNode, if it has one
            names = frozenset(getattr(own_tools, "tools_by_name", ()))
            self.hosting[agent_id] = Hosting(  # a team's own: its tools and models are its own, its input step too
                own_context,
                input_check,
                subgraphs,
                takes_browser_tools(agent),
                names,
                own_tools=True,
                names_models_called=True,
                input_declines_waiting=False,
            )
            # An agent compiled with a store of its own (an indexed one, langmem's or langgraph-bigtool's) keeps it:
            # its memories and tools are there. threadline's is for the agents that bring none.
            store = agent.store if isinstance(agent.store, BaseStore) else self.store
            return host_graph(agent, own_context, self.checkpointer, store, suggester, self.files, input_check)
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
