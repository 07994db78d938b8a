"""Local stand-ins for an OpenTelemetry collector and a Langfuse host, receiving what the SDKs really send.

Both speak OTLP over HTTP with protobuf bodies (Langfuse's SDK exports its traces that way, to
`/api/public/otel/v1/traces`, with basic auth): each request body is decoded with the OTLP protobuf
schema into flat `ReceivedSpan`s. Any other request the Langfuse SDK makes is answered 200 and kept.
"""

from __future__ import annotations

import gzip
import time
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from litestar import Litestar, Request, Response, route
from litestar.params import FromPath
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from threadline_testing.standins import serve_in_thread


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status_code: int
    scope: str
    resource: dict[str, Any]


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {item.key: _value(item.value) for item in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


def decode_spans(body: bytes) -> list[ReceivedSpan]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = {item.key: _value(item.value) for item in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    ReceivedSpan(
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        attributes={item.key: _value(item.value) for item in span.attributes},
                        status_code=span.status.code,
                        scope=scope_spans.scope.name,
                        resource=resource,
                    )
                )
    return spans


@dataclass
class Collector:
    """A running stand-in; `spans` holds every span received, `requests` every (method, path, headers)."""

    base_url: str = ""
    spans: list[ReceivedSpan] = field(default_factory=list)
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    server: uvicorn.Server | None = None

    def wait_for(self, predicate: Any, seconds: float = 15.0) -> list[ReceivedSpan]:
        """The spans received once `predicate(spans)` holds (the SDKs export in batches, from a thread)."""
        deadline = time.monotonic() + seconds
        while not predicate(self.spans):
            if time.monotonic() > deadline:
                raise AssertionError(f"not received in {seconds} s; got {[span.name for span in self.spans]}")
            time.sleep(0.05)
        return list(self.spans)

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True


def start_collector() -> Collector:
    """An OTLP/HTTP collector (traces at /v1/traces) or a Langfuse host (at /api/public/otel/v1/traces)."""
    collector = Collector()

    @route("/{path:path}", http_method=["GET", "POST", "PUT", "PATCH"])
    async def receive(request: Request[Any, Any, Any], path: FromPath[str]) -> Response[bytes]:
        collector.requests.append((request.method, path, dict(request.headers)))
        if path.endswith("/v1/traces"):
            body = await request.body()
            if request.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            collector.spans.extend(decode_spans(body))
            return Response(
                ExportTraceServiceResponse().SerializeToString(), media_type="application/x-protobuf", status_code=200
            )
        return Response(b"{}", media_type="application/json", status_code=200)

    app = Litestar([receive], request_max_body_size=None)
    collector.base_url, collector.server = serve_in_thread(app, "collector")
    return collector
