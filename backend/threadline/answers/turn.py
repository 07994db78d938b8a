"""One answer in flight, owned by a task of its own rather than by the HTTP response that carries it.

A closed tab, a stop request from anywhere, a timeout or a model failure all end the answer the same
way: open parts are closed, unfinished tool calls get an error result, and what was already shown is
saved to the conversation, marked as interrupted. The response only reads the events from its outbox.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

import msgspec
from langgraph.checkpoint.base import BaseCheckpointSaver

from threadline import events as ev
from threadline.agent.context import AgentContext
from threadline.agent.graph import Graph, TurnRequest
from threadline.agent.hosting import BUILT_IN_HOSTING, Hosting
from threadline.agent.tool_inputs import ToolInfo
from threadline.answers.failures import RATE_LIMITED, TIMEOUT, Failure, classify
from threadline.answers.outbox import Outbox
from threadline.answers.runner import run_graph
from threadline.answers.translator import TurnTranslator
from threadline.conversations.closing import STOPPED, Said, close_turn, forget_turn, keep_data_parts, keep_shown
from threadline.conversations.state import (
    AnswerRecord,
    Usage,
    config_of,
)
from threadline.observability.answers import Observability
from threadline.settings.answers import AnswerSettings, StreamMode
from threadline.storage.saver import READ_AHEAD, ReadAhead
from threadline.storage.trace_document import Status
from threadline.turn_context import current_turn

log = logging.getLogger(__name__)

_END = object()
TITLE_WAIT = 3.0  # seconds an answer's end waits for its new conversation's title
_STRUCTURE = (ev.Start, ev.StepStart, ev.StepFinish)  # frame an answer but show nothing by themselves
_TOOL_RESULTS = (ev.ToolOutput, ev.ToolOutputError)
_MODEL_OUTPUT = (ev.TextDelta, ev.ReasoningDelta, ev.ToolInputStart, ev.ToolInputAvailable)


class StreamRecording(Protocol):
    """Where an answer's events are kept for readers that resume it (recordings.Recording)."""

    def add(self, event: ev.Event) -> None: ...

    def end(self) -> None: ...


class Stop(StrEnum):
    CANCELLED = STOPPED
    DISCONNECTED = "client-disconnected"
    TIMEOUT = "timeout"
    SHUTDOWN = "server-stopping"


@dataclass(frozen=True)
class Timeouts:
    first_token: float = AnswerSettings().first_token_timeout
    idle: float = AnswerSettings().idle_timeout
    total: float = AnswerSettings().total_timeout

    @classmethod
    def of(cls, settings: AnswerSettings, agent_id: str | None = None) -> Timeouts:
        """The server's limits, with those THREADLINE_AGENT_TIMEOUTS gives this agent."""
        own = settings.agent_timeouts.get(agent_id or "")
        return cls(
            own.first_token if own and own.first_token else settings.first_token_timeout,
            own.idle if own and own.idle else settings.idle_timeout,
            own.total if own and own.total else settings.total_timeout,
        )


@dataclass(frozen=True)
class TurnSetup:
    """How an answer runs, beside what it answers: its wire's stream mode, its limits and watchers, and what
    happens to it when it fails or loses its reader."""

    stream_mode: StreamMode
    timeouts: Timeouts
    observability: Observability
    keep_failed_answer: bool = True  # False: a failed answer leaves no assistant message
    tools: Mapping[str, ToolInfo] | None = None  # each tool's title and input check, for the wires
    recording: StreamRecording | None = None  # the answer's stream, kept for readers that resume it
    continue_on_disconnect: bool = False  # CHAT_ON_DISCONNECT=continue
    context: AgentContext | None = None  # what the agent's nodes get as LangGraph runtime context
    hosting: Hosting = BUILT_IN_HOSTING  # what differs in the agent that answers (agent/graphs.py)


class Turn:
    # Slots, not a dict: past 30 attributes an instance's dict holds keys of its own (1.5 KB an answer).
    __slots__ = (
        "_interruptible",
        "_last_event",
        "_loop",
        "_output_seen",
        "_running",
        "_started",
        "_timers",
        "_warned",
        "client_id",
        "context",
        "continue_on_disconnect",
        "conversation_id",
        "declined",
        "graph",
        "keep_failed_answer",
        "models_called",
        "names_models_called",
        "naming",
        "observability",
        "outbox",
        "read_ahead",
        "recorder",
        "recording",
        "request",
        "resuming",
        "said",
        "stop_reason",
        "task",
        "thread_id",
        "timeouts",
        "trace",
        "translator",
        "usage_by_call",
        "watch",
    )

    def __init__(
        self, graph: Graph, thread_id: str, conversation_id: str, client_id: str, request: TurnRequest, setup: TurnSetup
    ) -> None:
        self.graph = graph
        self.thread_id = thread_id
        self.conversation_id = conversation_id
        self.client_id = client_id
        self.request = request
        self.timeouts = setup.timeouts
        self.translator = TurnTranslator(setup.stream_mode == "events", setup.tools, setup.hosting)
        self.names_models_called = setup.hosting.names_models_called
        self.translator.began_after = request.user_message_id  # an answer that goes on: where it paused (service)
        self.outbox = Outbox()
        self.stop_reason: Stop | None = None
        self.task: asyncio.Task[None] | None = None
        self.read_ahead: ReadAhead | None = None  # its conversation's latest checkpoint, read as it was recorded
        self._interruptible = True
        self._running = False
        self._output_seen = False
        self._warned: set[str] = set()
        self._started = self._last_event = 0.0
        self._loop: asyncio.AbstractEventLoop  # the one its task runs in, from its start
        self._timers: list[asyncio.TimerHandle] = []
        self.observability = setup.observability
        self.keep_failed_answer = setup.keep_failed_answer
        self.watch = setup.observability.watch(
            request.trace_id, conversation_id, request.assistant_message_id, request.model, client_id
        )
        self.watch.question_id, self.watch.replaces = request.user_message_id, request.regenerate
        self.recorder = self.trace = self.watch.recorder  # where the model and tool calls add themselves
        self.recording = setup.recording
        self.continue_on_disconnect = setup.continue_on_disconnect
        self.context = setup.context
        self.said: list[str] = []  # the answer's text as it streamed, for the conversation's search
        self.usage_by_call: list[tuple[str | None, Mapping[str, Any]]] = []  # every model call's (model_calls.py)
        self.models_called: set[str] = set()  # ... and the models they went to
        self.declined = self.translator.declined  # the tool calls the person declined (agent/hosting.py reads them)
        self.resuming = request.resume is not None  # it goes on after the person answered what it waited for
        self.naming: asyncio.Task[str | None] | None = None  # a new conversation's title being written

    def start(self, on_done: Callable[[Turn], Awaitable[None]]) -> asyncio.Task[None]:
        context = contextvars.copy_context()
        context.run(current_turn.set, self)
        self.task = asyncio.get_running_loop().create_task(self._run(on_done), context=context)
        return self.task

    def stop(self, reason: Stop) -> None:
        """Ask the answer to end now; it closes itself and saves what it has. A stop that arrives before the
        answer's task started ends it as soon as it starts."""
        if self._interruptible and self.stop_reason is None and not (self.task and self.task.done()):
            self.stop_reason = reason
            self.translator.stopped = True
            if self.task and self._running:  # a task cancelled before its first step would skip its cleanup
                self.task.cancel()

    async def finished(self) -> None:
        if self.task:
            await asyncio.shield(self.task)

    def warn(self, code: str, message: str) -> None:
        """Tell the client something degraded without ending the answer; each warning once per turn."""
        if code not in self._warned:
            self._warned.add(code)
            self._emit(ev.Warning(code=code, message=message))

    def _emit(self, event: ev.Event) -> None:
        """Every event of the answer goes to its trace and to the response."""
        self.recorder.observe(event)
        self._send(event)

    def _send(self, event: ev.Event) -> None:
        self.outbox.put(event)
        if self.recording is not None:
            self.recording.add(event)

    async def opening(self) -> list[ev.Event]:
        """Events up to the first one a user would see; an Error among them means nothing was streamed yet."""
        opening: list[ev.Event] = []
        while True:
            events = await self.outbox.take()
            for index, event in enumerate(events):
                if event is _END:
                    return opening
                opening.append(event)
                if not isinstance(event, _STRUCTURE):
                    self.outbox.put_back(events[index + 1 :])
                    return opening

    async def events(self, opening: list[ev.Event]) -> AsyncIterator[list[ev.Event]]:
        """The rest of the answer for the response, in batches of what is ready: under load the response
        then makes one write for many events. A response that goes away takes the answer with it, unless
        the answer is to continue on a disconnect (CHAT_ON_DISCONNECT=continue)."""
        ended = False
        outbox = self.outbox
        try:
            if opening:
                yield opening
            while not ended:
                batch = await outbox.take()
                if _END in batch:  # the last thing the answer's task puts
                    batch = batch[: batch.index(_END)]
                    ended = True
                if batch:
                    yield batch
        finally:
            if not ended and not self.continue_on_disconnect:
                self.stop(Stop.DISCONNECTED)

    # The answer's own task.

    async def _run(self, on_done: Callable[[Turn], Awaitable[None]]) -> None:
        self._running = True
        self._loop = loop = asyncio.get_running_loop()
        self._started = self._last_event = loop.time()
        # The timers run in a context of their own: a copy of this task's would name this answer, and asyncio
        # keeps a cancelled timer (with its context) until its time comes.
        self._timers = [
            loop.call_later(self.timeouts.total, self.stop, Stop.TIMEOUT, context=contextvars.Context()),
            loop.call_later(
                min(self.timeouts.first_token, self.timeouts.idle), self._check_idle, context=contextvars.Context()
            ),
        ]
        self.observability.started(self.watch)
        self._emit(self._start())
        try:
            if self.stop_reason is not None:
                raise asyncio.CancelledError
            await self._stream()
            if self.stop_reason is not None:
                raise asyncio.CancelledError
            self._interruptible = False
            if (self.translator.finish or {}).get("finish_reason") == "stop":  # a finished answer's only
                await self._keep_what_was_shown()
            await self._named()
            self._emit(self._finish())
            self.recorder.end("completed")
        except asyncio.CancelledError:
            if self.stop_reason is None:
                self.recorder.end("cancelled", interrupted=Stop.SHUTDOWN.value)
                raise  # the server is shutting down
            await self._stopped(self.stop_reason)
        except Exception as exc:  # noqa: BLE001 - whatever failed, the answer ends with a code and its partial saved
            await self._failed(exc)
        finally:
            for timer in self._timers:
                timer.cancel()
            if self.recording is not None:
                self.recording.end()
            try:  # the answer lets go of its conversation (in every process) before its stream closes, so a
                await on_done(self)  # message sent the moment it closes is never refused as busy
            finally:
                self.outbox.put(_END)
            await self.observability.ended(self.watch)
            await self._keep_latest_checkpoint()
            # The task's context lets go of the answer, which holds the task: no cycle is left for the garbage
            # collector, so what the answer held is freed now.
            current_turn.set(None)

    async def _keep_what_was_shown(self) -> None:
        """What the answer showed that its agent's state does not hold: messages of a subgraph's, and data parts."""
        translator = self.translator
        if translator.subgraph_shown:
            await keep_shown(self.graph, self.thread_id, translator.shown)
        if translator.data_parts:
            parts = list(translator.data_parts.values())
            await keep_data_parts(self.graph, self.thread_id, self.request.user_message_id, parts)

    async def _named(self) -> None:
        """A new conversation's title goes out before the answer's end when it is ready by then, or soon after
        (it is written beside the answer, from the question); later, the conversation list has it."""
        if self.naming is None:
            return
        await asyncio.wait({self.naming}, timeout=TITLE_WAIT)
        if self.naming.done() and not self.naming.cancelled() and (title := self.naming.result()):
            self._emit(ev.Title(title=title))

    def _start(self) -> ev.Start:
        request = self.request
        return ev.Start(
            message_id=request.assistant_message_id,
            conversation_id=self.conversation_id,
            model=request.model,
            created_at=request.created_at,
            trace_id=request.trace_id,
            profile=request.profile,
            comparison_id=request.comparison_id,
        )

    async def _stream(self) -> None:
        """The graph run, each event it makes passed on as it comes."""
        conversation = config_of(self.thread_id)
        if self.read_ahead is not None:  # the run's first read of the conversation's checkpoint takes it
            conversation["configurable"][READ_AHEAD] = self.read_ahead
        await run_graph(self.graph, conversation, self.request, self.translator, self._show, self.watch, self.context)

    def _show(self, event: ev.Event) -> None:
        """One event of the graph run, watched and passed on: the path every token takes."""
        if self.stop_reason is not None:  # a stop whose cancellation the graph run swallowed: it ends here
            raise asyncio.CancelledError
        self._last_event = self._loop.time()
        if event.__class__ is ev.ToolProgress and not self.translator.events_mode:  # it kept the answer alive
            return
        if not self._output_seen and isinstance(event, _MODEL_OUTPUT):
            self._output_seen = True
        self.recorder.observe(event)
        if event.__class__ is ev.TextDelta:
            self.said.append(event.delta)
        elif event.__class__ in _TOOL_RESULTS:
            event = msgspec.structs.replace(event, duration_ms=self.recorder.duration_of(event.tool_call_id))
        self._send(event)

    async def _stopped(self, reason: Stop) -> None:
        """A stop, a disconnect or a timeout: the answer ends with what it had shown, saved."""
        self._interruptible = False
        status: Status = "timeout" if reason is Stop.TIMEOUT else "cancelled"
        failure = (RATE_LIMITED if self.translator.provider_busy else TIMEOUT) if reason is Stop.TIMEOUT else None
        self.recorder.end(status, error_code=failure.code if failure else None, interrupted=reason.value)
        log.log(
            logging.WARNING if reason is Stop.TIMEOUT else logging.INFO,
            "answer stopped: %s",
            reason.value,
            extra={"conversation_id": self.conversation_id},
        )
        # The plain string, not the enum: the checkpoint stores it, and LangGraph will refuse to load
        # types it does not know.
        await self._interrupt(reason.value, failure)

    async def _failed(self, exc: Exception) -> None:
        self._interruptible = False
        failure = classify(exc, self.request.trace_id)
        log.error(
            "turn failed: %s",
            failure.code,
            exc_info=exc,
            extra={"conversation_id": self.conversation_id, "error_code": failure.code},
        )
        self.recorder.end("error", error_code=failure.code)
        await self._interrupt("error", failure)

    async def _keep_latest_checkpoint(self) -> None:
        """Drop the conversation's older checkpoints: each holds every message again, so keeping them all
        would grow storage with the square of a conversation's length. Nothing reads them: history, stops
        and regeneration all start from the latest one. Runs after the answer has ended."""
        checkpointer = self.graph.checkpointer
        if not isinstance(checkpointer, BaseCheckpointSaver):
            return
        try:
            await checkpointer.aprune([self.thread_id])
        except NotImplementedError:
            pass  # LangGraph's in-memory saver (CHAT_MEMORY_BACKEND=memory) cannot prune
        except Exception:
            log.warning(
                "could not prune old checkpoints", exc_info=True, extra={"conversation_id": self.conversation_id}
            )

    def _check_idle(self) -> None:
        """One timer per turn, re-armed when it fires, instead of a timer reset on every token. The limits measure the
        silence of the agent's work: its events, and its hidden tokens and node steps (an agent that researches
        with hidden calls before it says anything is not silent)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        worked = now - (time.monotonic() - self.translator.last_work)  # on the loop's clock
        if self._output_seen or worked > self._started:
            due = next_check = max(self._last_event, worked) + self.timeouts.idle
        else:  # the first output may arrive any moment, and then the idle limit applies from it
            due = self._started + self.timeouts.first_token
            next_check = min(due, now + self.timeouts.idle)
        if now >= due:
            self.stop(Stop.TIMEOUT)
        else:
            self._timers.append(loop.call_at(next_check, self._check_idle, context=contextvars.Context()))

    def _finish(self) -> ev.Finish:
        """The answer's end: its record's usage and models, or, for an answer that waits for the person (its turn
        has no record yet), every call made so far and the agent's own models."""
        finish = self.translator.finish or AnswerRecord()
        return ev.Finish(
            finish_reason=finish.get("finish_reason", "stop"),
            finished_at=finish.get("finished_at") or ev.timestamp(),
            usage=ev.Usage(**(finish.get("usage") or self._used())),
            trace_id=self.request.trace_id,
            model=finish.get("model") or self._models(),
        )

    def _used(self) -> Usage:
        """Every model call's usage so far (a hidden router's too), each call once."""
        usage = Usage(input_tokens=0, output_tokens=0, total_tokens=0)
        seen: set[str] = set()
        for message_id, used in self.usage_by_call:
            if message_id is not None and message_id in seen:
                continue
            seen.add(message_id or "")
            for key in ("input_tokens", "output_tokens", "total_tokens"):
                usage[key] += used.get(key, 0)
        return usage

    def _models(self) -> str:
        """The models a hosted agent called, when they are its own and not the profile's (Start names that)."""
        return ", ".join(sorted(self.models_called)) if self.names_models_called else ""

    async def _interrupt(self, why: str, failure: Failure | None) -> None:
        """Close the answer on the wire first, then save it, so the client is not kept waiting."""
        put = self._emit
        for event in self.translator.interrupted(why.replace("-", " ") if failure is None else failure.message):
            put(event)
        finished_at = ev.timestamp()
        if failure is not None:
            put(ev.Error(code=failure.code, message=failure.message, retryable=failure.retryable))
        else:
            put(
                ev.Finish(
                    finish_reason="other",
                    finished_at=finished_at,
                    usage=ev.Usage(**self._used()),
                    interrupted=why,
                    trace_id=self.request.trace_id,
                    model=self._models(),
                )
            )
        try:
            if failure is not None and not self.keep_failed_answer:
                await forget_turn(self.graph, self.thread_id, self.request.assistant_message_id, finished_at)
            else:
                await self._save_interrupted(why, "error" if failure else "other", finished_at)
        except Exception:
            log.exception("could not save an interrupted answer", extra={"conversation_id": self.conversation_id})

    async def _save_interrupted(self, why: str, finish_reason: str, finished_at: str) -> None:
        await close_turn(
            self.graph,
            self.thread_id,
            why,
            finish_reason,
            finished_at,
            said=Said(self.translator.shown, self.translator.partial_message(), self._used()),
            assistant_id=self.request.assistant_message_id,
        )
