"""THREADLINE_GRAPH: finding a team's LangGraph agent and checking, at start-up, that threadline can host it.

`path/to/file.py:name` or `package.module:name` names a `StateGraph` builder, a compiled graph, or a
factory that returns either, given nothing, a `RunnableConfig` or an `AgentContext` (by what it takes);
`path/langgraph.json` names every graph of
that file (agent/langgraph_json.py), each served as an agent a conversation may pick. A `messages` state key must
merge message lists by id, as LangGraph's add_messages does; a graph without one is served as a task
(agent/task_graphs.py). Anything else stops start-up with one line that says what is wrong.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.channels.base import BaseChannel
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel

from threadline.agent.context import AgentContext
from threadline.agent.langgraph_json import ConfigError, graph_entries, is_config

AgentGraph = Pregel[Any, Any, Any, Any]  # a compiled graph, run inside threadline's own (agent/hosting.py)
AgentSource = StateGraph[Any, Any, Any, Any] | AgentGraph | Callable[[AgentContext], Any]


class AgentLoadError(ValueError):
    """THREADLINE_GRAPH names something threadline cannot run; the message is one line for the operator."""


class NoMessages(AgentLoadError):
    """The graph has no `messages` channel threadline can keep a conversation in."""


@dataclass(frozen=True)
class ServedAgent:
    """One graph threadline serves: the id a chat body's `agent` names (GET /api/agents), and where it comes
    from. `name` is the compiled graph's own, when it has one; `starters` its langgraph.json entry's."""

    id: str
    source: AgentSource
    description: str = ""
    name: str = ""
    starters: tuple[str, ...] = ()

    def public(self) -> PublicAgent:
        return PublicAgent(self.id, self.name or self.id, self.description, list(self.starters))


class PublicAgent(msgspec.Struct, frozen=True):
    """An agent as GET /api/agents shows it."""

    id: str  # what the chat body's `agent` names
    name: str
    description: str
    starters: list[str] = msgspec.field(default_factory=list)  # an empty conversation's prompts, when it has its own


def load_sources(spec: str) -> list[ServedAgent]:
    """The graphs `spec` names: one for `file.py:name` or `module:name` (its id is `name`), those of a
    langgraph.json by their ids there."""
    if not is_config(spec):
        return [ServedAgent(spec.rpartition(":")[2], load_source(spec))]
    try:
        entries = graph_entries(spec)
    except ConfigError as error:
        raise AgentLoadError(str(error)) from None
    return [
        ServedAgent(entry.id, load_source(entry.target), entry.description, starters=entry.starters)
        for entry in entries
    ]


def load_source(spec: str) -> AgentSource:
    """The object `spec` (`file.py:name` or `module:name`) names, imported from a file or a module."""
    where, _, name = spec.rpartition(":")
    if not where or not name:
        raise AgentLoadError(f"THREADLINE_GRAPH must be path/to/file.py:name or package.module:name (got {spec!r})")
    module = _import(where, spec)
    try:
        return getattr(module, name)  # type: ignore[no-any-return]
    except AttributeError:
        raise AgentLoadError(f"THREADLINE_GRAPH: {where} has no {name!r}") from None


def _import(where: str, spec: str) -> Any:
    try:
        if where.endswith(".py") or "/" in where:
            path = Path(where).resolve()
            if not path.is_file():
                raise AgentLoadError(f"THREADLINE_GRAPH: no such file {where!r}")
            module_spec = importlib.util.spec_from_file_location(f"threadline_agent_{path.stem}", path)
            assert module_spec is not None and module_spec.loader is not None, "a .py file always has a loader"
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[module_spec.name] = module
            module_spec.loader.exec_module(module)
            return module
        return importlib.import_module(where)
    except AgentLoadError:
        raise
    except Exception as error:
        raise AgentLoadError(f"THREADLINE_GRAPH: importing {spec!r} failed: {_one_line(error)}") from error


def agent_graph(source: AgentSource, context: AgentContext) -> AgentGraph:
    """The compiled graph `source` gives for this context, without a checkpointer of its own: run as a subgraph,
    it is checkpointed with the conversation by threadline's."""
    made: Any = source
    if callable(source) and not isinstance(source, StateGraph | Pregel):
        try:
            made = source(*_factory_arguments(source, context))
        except Exception as error:
            raise AgentLoadError(f"THREADLINE_GRAPH: the factory raised {_one_line(error)}") from error
    if isinstance(made, StateGraph):
        try:
            made = made.compile()
        except Exception as error:
            raise AgentLoadError(f"THREADLINE_GRAPH: the graph does not compile: {_one_line(error)}") from error
    if not isinstance(made, Pregel):
        kind = type(made).__name__
        raise AgentLoadError(f"THREADLINE_GRAPH must name a StateGraph, a compiled graph or a factory (got {kind})")
    # Without `messages` it is served as a task (agent/task_graphs.py), which says whether it can be mapped.
    if "messages" in made.channels and (problem := messages_problem(made.channels["messages"])):
        raise NoMessages(f"THREADLINE_GRAPH: the graph's `messages` state key {problem}")
    return made.copy(update={"checkpointer": None}) if made.checkpointer not in (None, True) else made


def _factory_arguments(factory: Callable[..., Any], context: AgentContext) -> tuple[Any, ...]:
    """What a factory is given, by what it takes, as langgraph.json allows: nothing, a `RunnableConfig` (a parameter
    named `config` or annotated so), or threadline's `AgentContext` (the model, tools and settings it would use)."""
    try:
        parameters = [
            parameter
            for parameter in inspect.signature(factory).parameters.values()
            if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):  # no signature to read (a builtin, say): given the context, as before
        return (context,)
    if not parameters:
        return ()
    first = parameters[0]
    if first.name == "config" or "RunnableConfig" in str(first.annotation):
        return (RunnableConfig(configurable={}),)
    return (context,)


def messages_problem(channel: Any) -> str | None:
    """What keeps threadline from keeping a conversation in this channel, else None. Judged by behaviour, not by
    the reducer's identity, so `add_messages`, deepagents' DeltaChannel or a reducer of one's own all pass: a
    message list is appended to, and a message with a known id replaces that message."""
    if channel is None:
        return "is missing: MessagesState or LangChain's AgentState have one"
    if not isinstance(channel, BaseChannel):
        return f"is a {getattr(channel, '__name__', type(channel).__name__)}, not a channel of messages"
    first, second, edited = HumanMessage("a", id="m1"), AIMessage("b", id="m2"), HumanMessage("c", id="m1")
    try:
        trial = channel.copy()
        trial.update([[first]])
        trial.update([[second]])
        trial.update([[edited]])
        kept = trial.get()
    except Exception as error:  # noqa: BLE001 - whatever the reducer raises is the operator's answer
        return f"does not take message lists ({type(channel).__name__} raised {_one_line(error)})"
    seen = [(m.id, m.content) for m in kept if isinstance(m, BaseMessage)] if isinstance(kept, list) else None
    if seen != [("m1", "c"), ("m2", "b")]:
        found = f"{len(seen)} messages" if seen is not None else type(kept).__name__
        return (
            f"does not merge messages by id ({type(channel).__name__}: three updates, two of them to one id, "
            f"kept {found}); LangGraph's add_messages reducer does (MessagesState or AgentState have one)"
        )
    return None


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
