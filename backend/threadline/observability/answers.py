"""Everything that watches answers, started once per process: stored traces, metrics, the log line,
OpenTelemetry and Langfuse.

Each answer gets an `AnswerWatch` when it is created (answers/turn.py feeds it the answer's events) and hands
it back when it has ended; only then is anything written or exported, after the client has its last
byte, so watching costs the answer nothing before its first token.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context

from threadline.chores import hourly
from threadline.observability import metrics
from threadline.observability.otel import AnswerSpans
from threadline.observability.trace import TraceRecorder
from threadline.storage.trace_document import ToolCall
from threadline.storage.traces import TraceStore

if TYPE_CHECKING:
    from threadline.observability.langfuse_callbacks import LangfuseCallbacks

log = logging.getLogger(__name__)


@dataclass
class AnswerWatch:
    """One answer's recorder, and what its graph run needs to be traced elsewhere too."""

    client_id: str
    recorder: TraceRecorder
    callbacks: list[Any] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
    question_id: str = ""  # the user message the answer answers
    replaces: bool = False  # a regenerated answer: the one before it is replaced


class Observability:
    def __init__(
        self,
        traces: TraceStore,
        *,
        spans: AnswerSpans | None = None,
        langfuse: LangfuseCallbacks | None = None,
        retention_days: float = 30.0,
    ) -> None:
        self.traces = traces
        self.spans = spans
        self.langfuse = langfuse
        self.retention_days = retention_days

    def watch(self, trace_id: str, conversation_id: str, message_id: str, model: str, client_id: str) -> AnswerWatch:
        recorder = TraceRecorder(trace_id, conversation_id, message_id, model)
        watch = AnswerWatch(client_id, recorder)
        if self.langfuse is not None:
            watch.callbacks, watch.metadata = self.langfuse.for_answer(trace_id, conversation_id, client_id)
        return watch

    def started(self, watch: AnswerWatch) -> None:
        self.traces.live.running[watch.recorder.trace_id] = (watch.client_id, watch.recorder)
        metrics.RUNNING.inc()

    async def ended(self, watch: AnswerWatch) -> None:
        """Count, log, export and store the ended answer's trace; a failure here never reaches the answer."""
        metrics.RUNNING.dec()
        trace = watch.recorder.trace()
        try:
            metrics.count(trace)
            log.info(
                "answer %s",
                trace.status,
                extra={
                    "conversation_id": trace.conversation_id,
                    "trace_id": trace.trace_id,
                    "model": trace.model,
                    "first_token_ms": trace.first_token_ms,
                    "total_ms": trace.total_ms,
                    "input_tokens": trace.usage.input_tokens,
                    "output_tokens": trace.usage.output_tokens,
                    "tool_calls": sum(isinstance(step, ToolCall) for step in trace.events),
                    "outcome": trace.status,
                    "error_code": trace.error_code,
                },
            )
            if self.spans is not None:
                self.spans.export(trace, watch.client_id, otel_context.get_current())
            # Without retention (0) the trace is seen live, counted and exported, but not kept: its row still
            # says which conversation the answer is in, for ratings.
            await self.traces.save(watch.client_id, trace, watch.question_id, keep=self.retention_days > 0)
            if watch.replaces:
                await self.traces.bound(watch.client_id, trace.conversation_id)
        except Exception:
            log.warning("could not store an answer's trace", exc_info=True, extra={"trace_id": trace.trace_id})
        finally:
            self.traces.live.running.pop(trace.trace_id, None)

    async def keep_pruning(self) -> None:
        """Drop the documents of traces older than the retention period, hourly."""
        if self.retention_days > 0:
            await hourly(
                lambda: self.traces.drop_older_than(self.retention_days),
                f"dropped %d traces older than {self.retention_days:g} days",
                "could not drop old traces; will retry",
            )

    def close(self) -> None:
        """Send what the exporters still hold before the process ends (blocking: at most their timeouts)."""
        if self.langfuse is not None:
            self.langfuse.close()
        if self.spans is not None:
            self.spans.provider.shutdown()
