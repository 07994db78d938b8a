"""OpenTelemetry spans for each answer, exported over OTLP (HTTP/protobuf) when an endpoint is set.

The HTTP request's span comes from the OpenTelemetry ASGI instrumentation (Litestar's plugin), which
continues an incoming `traceparent`. The answer's span and its model and tool call spans are made from
the finished trace, with the times it recorded, as children of the request's span: nothing runs per
token, and nothing at all when no endpoint is set. Attribute names follow the GenAI semantic
conventions. Spans leave through the SDK's batch processor (a bounded queue in its own thread), so a
collector that is down costs a chat nothing; its exporter logs each failed batch.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from opentelemetry import trace as otel_trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from threadline.storage.trace_document import ModelCall, ToolCall, Trace, TraceError, TraceWarning

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider


def tracer_provider(endpoint: str) -> TracerProvider:
    """Our own provider, not the global one, so another SDK in the process (Langfuse's) keeps to itself.
    Resource attributes come from OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, headers from
    OTEL_EXPORTER_OTLP_HEADERS, as the SDK reads them. The SDK and its exporter are imported only here, when
    an endpoint is set."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: "threadline"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    return provider


def _ns(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1_000_000_000)


def _after(start_ns: int, ms: float | None) -> int:
    return start_ns + int((ms or 0.0) * 1_000_000)


class AnswerSpans:
    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self.tracer = provider.get_tracer("threadline")

    def export(self, trace: Trace, client_id: str, parent: Context | None) -> None:
        """The answer as a span with a child span per model and tool call, under `parent` (the request's)."""
        start = _ns(trace.started_at)
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "threadline",
            "gen_ai.conversation.id": trace.conversation_id,
            "gen_ai.request.model": trace.model,
            "gen_ai.usage.input_tokens": trace.usage.input_tokens,
            "gen_ai.usage.output_tokens": trace.usage.output_tokens,
            "enduser.id": client_id,
            "threadline.trace_id": trace.trace_id,
            "threadline.message_id": trace.message_id,
            "threadline.status": trace.status,
        }
        if trace.first_token_ms is not None:
            attributes["threadline.first_token_ms"] = trace.first_token_ms
        span = self.tracer.start_span(
            "invoke_agent threadline", context=parent, kind=SpanKind.INTERNAL, attributes=attributes, start_time=start
        )
        inside = otel_trace.set_span_in_context(span)
        for step in trace.events:
            at = _ns(step.at)
            if isinstance(step, ModelCall):
                model_attributes: dict[str, AttributeValue] = {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": step.model,
                    "gen_ai.usage.input_tokens": step.usage.input_tokens,
                    "gen_ai.usage.output_tokens": step.usage.output_tokens,
                    "threadline.input_messages": step.input_messages,
                }
                self._child(
                    inside, f"chat {step.model}", SpanKind.CLIENT, at, step.duration_ms, model_attributes, step.error
                )
            elif isinstance(step, ToolCall):
                tool_attributes: dict[str, AttributeValue] = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": step.tool,
                    "gen_ai.tool.call.id": step.tool_call_id,
                }
                if step.server:
                    tool_attributes["threadline.mcp.server"] = step.server
                error = None if step.error is None else str(step.error)
                self._child(
                    inside, f"execute_tool {step.tool}", SpanKind.INTERNAL, at, step.duration_ms, tool_attributes, error
                )
            elif isinstance(step, TraceWarning | TraceError):
                span.add_event(step.code, {"message": step.message, "kind": type(step).__name__}, timestamp=at)
        if trace.status in ("error", "timeout"):
            span.set_status(Status(StatusCode.ERROR, trace.error_code or trace.status))
            span.set_attribute("error.type", trace.error_code or trace.status)
        span.end(end_time=_after(start, trace.total_ms))

    def _child(
        self,
        parent: Context,
        name: str,
        kind: SpanKind,
        start: int,
        duration_ms: float | None,
        attributes: dict[str, AttributeValue],
        error: str | None,
    ) -> None:
        """One model or tool call's span, made whole from its recorded start and duration."""
        child = self.tracer.start_span(name, context=parent, kind=kind, start_time=start, attributes=attributes)
        if error is not None:
            child.set_status(Status(StatusCode.ERROR, error))
        child.end(end_time=_after(start, duration_ms))
