"""OpenAPI for what Litestar does not describe by itself: routes that stream SSE events of JSON."""

from __future__ import annotations

from dataclasses import dataclass

from litestar.openapi.spec import OpenAPIType, Operation, Schema


@dataclass
class SseOperation(Operation):
    """The OpenAPI operation of a route answering with a stream of SSE events whose `data` is JSON.

    Give the route `ResponseSpec(<union of event Structs>, media_type="text/event-stream")`: Litestar
    documents the event types from it, and this moves their schema to where tools read it for SSE,
    each event's `data`, as its `contentSchema` (`contentMediaType: application/json`).
    """

    def __post_init__(self) -> None:
        for response in (self.responses or {}).values():
            for media_type, content in (getattr(response, "content", None) or {}).items():
                if media_type.startswith("text/event-stream") and content.schema is not None:
                    data = Schema(
                        type=OpenAPIType.STRING, content_media_type="application/json", content_schema=content.schema
                    )
                    content.schema = Schema(type=OpenAPIType.OBJECT, properties={"data": data}, required=["data"])
