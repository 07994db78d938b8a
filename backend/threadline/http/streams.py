"""An answer as an HTTP response: the wire the request asks for, and the stream of its bytes."""

from __future__ import annotations

from litestar.response import Stream

from threadline import events as ev
from threadline.answers.turn import Turn
from threadline.http.errors import AnyRequest, ApiError
from threadline.http.schemas import ErrorDetail
from threadline.wires.registry import BY_MEDIA_TYPE, UI_MESSAGE_STREAM, WIRES, Wire

PRE_STREAM_FAILURE = 500
PRE_STREAM_STATUS = {"VALIDATION_ERROR": 400}  # the request, not the server: the agent's input lacks a key


def choose_wire(request: AnyRequest) -> Wire:
    """`?protocol=` when given, else the Accept header; the UI Message Stream when nothing is asked for."""
    if (protocol := request.query_params.get("protocol")) is not None:
        if protocol in WIRES:
            return WIRES[protocol]
    elif "accept" not in request.headers:
        return UI_MESSAGE_STREAM
    elif (media_type := request.accept.best_match(list(BY_MEDIA_TYPE))) is not None:
        return BY_MEDIA_TYPE[media_type]
    raise ApiError(
        406,
        "NOT_ACCEPTABLE",
        "This answer can stream as: Accept: text/event-stream (the AI SDK UI "
        "Message Stream, the default), Accept: application/x-ndjson, or ?protocol=data-stream (AI SDK 4).",
        [ErrorDetail("protocol", f"one of {', '.join(WIRES)}")],
    )


async def stream_answer(turn: Turn, wire: Wire, conversation_id: str) -> Stream:
    """The answer on `wire`, from every streaming route; a failure before anything was shown is still an HTTP
    status the client checks, where the wire wants one."""
    opening = await turn.opening()
    if wire.refuses_early and opening and isinstance(opening[-1], ev.Error):
        # The answer is let finish closing first, so a retry sent at once is not refused as a second answer.
        failure = opening[-1]
        await turn.finished()
        status = PRE_STREAM_STATUS.get(failure.code, PRE_STREAM_FAILURE)
        raise ApiError(status, failure.code, failure.message)
    return Stream(
        wire.encode(turn.events(opening)),
        media_type=wire.media_type,
        headers={**wire.headers, "x-conversation-id": conversation_id},
    )
