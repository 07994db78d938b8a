"""The composition root: the app's services, built once when the server starts, in dependency order.

`running_services` opens storage, builds the model and the graph, connects the tool servers and starts
the background loops; `Services` is what the HTTP handlers declare (`services: Services`) to reach them.
Nothing here knows HTTP: the app (http/app.py) starts it in its lifespan.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from threadline.agent.attachments import FileReader
from threadline.agent.graph import Graph, TurnInput, keep_lost_input
from threadline.agent.graphs import GraphSwitch
from threadline.agent.loading import ServedAgent
from threadline.answers.active import ActiveTurns
from threadline.answers.conversation_service import ConversationService, Retention
from threadline.answers.recordings import Recordings
from threadline.answers.service import AnswerService
from threadline.answers.thread_access import Decide, ThreadAccess
from threadline.conversations.attachments import FileLimits, checked_file, kept
from threadline.conversations.closing import recover_turn
from threadline.conversations.state import FileRef, after_history
from threadline.mcp.tool import KeepFile
from threadline.mcp.toolbox import McpToolbox
from threadline.observability.answers import Observability
from threadline.observability.otel import AnswerSpans
from threadline.settings import Settings
from threadline.settings.profiles import Profile
from threadline.storage.conversation_list import Conversations
from threadline.storage.file_store import keep_dropping_unused
from threadline.storage.stores import Storage, open_storage

if TYPE_CHECKING:
    from mcp.server.fastmcp import FastMCP
    from opentelemetry.sdk.trace import TracerProvider

log = logging.getLogger(__name__)
READY = "threadline ready: model %s, storage %s, stream mode %s, rate limit %s per client address"


@dataclass(frozen=True)
class Services:
    settings: Settings  # what a request falls back on, who may sign in and operate the server, the bounds it checks
    model_label: str
    storage: Storage
    graphs: GraphSwitch
    toolbox: McpToolbox
    answers: AnswerService
    conversation_service: ConversationService  # deleting and claiming whole conversations
    observability: Observability
    file_limits: FileLimits  # what an attached, uploaded or tool-made file may be, from the FILE_* settings

    @property
    def graph(self) -> Graph:
        return self.graphs.current

    @property
    def profiles(self) -> dict[str, Profile]:
        return self.graphs.profiles

    @property
    def conversations(self) -> Conversations:
        return self.storage.conversations


def tool_files(limits: FileLimits, storage: Storage) -> KeepFile:
    """How a file a tool returns is kept: checked and stored like an upload (within the owner's FILE_QUOTA_BYTES),
    used by its conversation."""

    async def keep(owner: str, conversation_id: str, data: bytes, media_type: str, name: str) -> FileRef:
        checked = await checked_file(data, media_type, name, limits, "tool result")
        file = await kept(storage.files, owner, checked)
        await storage.files.use(owner, [file["id"]], conversation_id)
        return file

    return keep


def observability_of(settings: Settings, storage: Storage, tracer_provider: TracerProvider | None) -> Observability:
    langfuse = None
    if settings.observability.langfuse_public_key and settings.observability.langfuse_secret_key:
        # Imported only when configured: the Langfuse SDK and what it brings hold some 15 MB.
        from threadline.observability.langfuse_callbacks import LangfuseCallbacks

        langfuse = LangfuseCallbacks(
            settings.observability.langfuse_public_key,
            settings.observability.langfuse_secret_key,
            settings.observability.langfuse_host,
        )
    return Observability(
        storage.traces,
        spans=AnswerSpans(tracer_provider) if tracer_provider else None,
        langfuse=langfuse,
        retention_days=settings.observability.trace_retention_days,
    )


async def recover_answer(graphs: GraphSwitch, thread_id: str, why: str, turn_input: dict[str, Any] | None) -> None:
    """Close the turn of an answer whose process died, with the question it brought."""
    if turn_input is not None:
        await keep_lost_input(graphs.current, thread_id, cast(TurnInput, turn_input))
    await recover_turn(graphs.current, thread_id, why)


def answer_service(
    settings: Settings, storage: Storage, graphs: GraphSwitch, tracer_provider: TracerProvider | None
) -> AnswerService:
    """The answer service, with the running answers shared by every process and their recordings."""
    active_turns = ActiveTurns(
        storage.pool,
        storage.database_url,
        storage.health,
        stale_after=settings.answers.total_timeout + 30,
        recover=partial(recover_answer, graphs),
    )
    recordings = Recordings(storage.pool, active_turns.runs_in_a_live_process)
    observability = observability_of(settings, storage, tracer_provider)
    return AnswerService(settings.answers, graphs, storage, active_turns, recordings, observability)


def chores(services: Services) -> list[Coroutine[Any, Any, None]]:
    """What runs beside the answers while the server does: saving what waited for the database, pruning traces,
    dropping unused files, expiring conversations, and (on PostgreSQL) listening to the other processes."""
    storage, answers = services.storage, services.answers
    chores = [
        storage.keep_saving(),
        services.observability.keep_pruning(),
        keep_dropping_unused(storage.files),
        services.conversation_service.keep_expiring(),
    ]
    if storage.pool is not None:
        chores.append(answers.active.listen(on_resume=answers.recordings.share))
    return chores


@asynccontextmanager
async def running_services(
    settings: Settings,
    chat_limit: str,
    builtin: FastMCP,
    tracer_provider: TracerProvider | None = None,
    agents: Sequence[ServedAgent] = (),
    decide: Decide | None = None,
) -> AsyncIterator[Services]:
    """Start everything an answer needs, in order (storage → model → tools → graph), and stop it again;
    `chat_limit` says in the log what the chat's rate limit is; `builtin` is threadline's own MCP server, which
    answers call in process; answers' spans go to `tracer_provider` when there is one;
    `agents` are a team's own (agent/loading.py), else the built-in; `decide` is what a langgraph.json's auth
    handlers say callers may do with their conversations (answers/thread_access.py)."""
    async with open_storage(settings.storage, after_history) as storage:
        file_limits = FileLimits.of(settings.files)
        files = FileReader(storage.files.read, settings.files.file_prompt_bytes)
        graphs = GraphSwitch(settings.models, storage.checkpointer, settings.agents, agents, files, storage.store)
        toolbox = McpToolbox(
            settings.mcp.mcp_servers,
            keep_file=tool_files(file_limits, storage),
            timeout=settings.mcp.mcp_tool_timeout,
            on_change=graphs.use_tools,
            builtin=builtin,
        )
        await toolbox.start()
        answers = answer_service(settings, storage, graphs, tracer_provider)
        answers.access = ThreadAccess(decide, storage.store)
        retention = Retention(settings.storage.conversation_retention_days, settings.storage.anonymous_retention_days)
        conversation_service = ConversationService(storage, answers.active, retention)
        services = Services(
            settings=settings,
            model_label=graphs.default.model_label,
            storage=storage,
            graphs=graphs,
            toolbox=toolbox,
            answers=answers,
            conversation_service=conversation_service,
            observability=answers.observability,
            file_limits=file_limits,
        )
        background = [asyncio.create_task(chore) for chore in chores(services)]
        log.info(READY, services.model_label, storage.description, settings.answers.stream_mode, chat_limit)
        try:
            yield services
        finally:
            await answers.active.stop_all()
            await asyncio.gather(*answers.chores, return_exceptions=True)
            for task in answers.recordings.tasks:  # their rows go with the next process's clean-up
                task.cancel()
            for task in background:
                task.cancel()
            await toolbox.close()
            await asyncio.to_thread(services.observability.close)  # flushing may wait on a collector
