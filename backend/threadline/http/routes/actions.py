"""POST /api/actions: a suggested server action pressed under an answer (agent/actions.py has the registry).

An action that answers with a result gets it back as JSON; one that continues the conversation streams
the new answer like POST /api/chat (UI Message Stream, or NDJSON by Accept). With `detach`, what the page
sends, a continuing action answers 202 at once and the page reads the answer from GET /api/chat/{id}/stream.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Response, post
from litestar.openapi import ResponseSpec
from litestar.params import JSONBody

from threadline.agent.actions import ActionCall, ActionResult, ContinueConversation
from threadline.answers.options import AnswerOptions, NewMessage, new_id
from threadline.answers.turn import Turn
from threadline.conversations.state import Conversation, answer_text, load
from threadline.http.dependencies import Allowance, Ctx
from threadline.http.errors import AnyRequest, ApiError, error_responses, json_only, not_found
from threadline.http.messages import storable
from threadline.http.schemas import ErrorDetail, Id
from threadline.http.streams import choose_wire, stream_answer
from threadline.runtime import Services
from threadline.storage.threads import thread_of
from threadline.wires.registry import UI_MESSAGE_STREAM

log = logging.getLogger(__name__)


class ActionRequest(msgspec.Struct, rename="camel"):
    conversation_id: Id
    message_id: Id  # the answer whose suggestion was pressed
    action: Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
    data: dict[str, Any] | None = None
    user_message_id: Id | None = None  # the id of the message a continuing action sends, when the client picks it
    stream_mode: Literal["messages", "events"] | None = None
    detach: bool = False  # a continuing action: answer 202 now, the answer is read by resuming the stream


class ActionDone(msgspec.Struct, rename="camel"):
    action: str
    result: dict[str, Any]
    message: str


class ActionContinued(msgspec.Struct, rename="camel"):
    """A detached continuation: the messages it adds, the answer to be read from GET /api/chat/{id}/stream."""

    action: str
    user_message_id: str | None  # None when the action writes the last answer again
    text: str | None
    message_id: str


def _check(services: Services, data: ActionRequest) -> None:
    if data.detach and not services.settings.answers.resumable:
        raise ApiError(400, "VALIDATION_ERROR", "detach needs resumable answers (CHAT_RESUMABLE=true)")
    registry = services.graphs.actions
    action = registry.get(data.action)
    if action is None or action.handler != "server":
        why = "there is no server action by this name" if action is None else "it runs in the page, not the server"
        raise ApiError(400, "UNKNOWN_ACTION", f"Unknown action {data.action!r}: {why}", [ErrorDetail("action", why)])
    if (problem := registry.problem(data.action, "server", data.data)) is not None:
        raise ApiError(
            400, "VALIDATION_ERROR", f"Invalid data for {data.action!r}: {problem}", [ErrorDetail("data", problem)]
        )


def was_suggested(conversation: Conversation, data: ActionRequest) -> bool:
    """Whether the answer suggested this action with this data (no data and `{}` are the same)."""
    question = conversation.question_answered_by(data.message_id)
    suggestions = conversation.records.get(question or "", {}).get("suggestions", {})
    return any(
        suggested.get("action") == data.action and (suggested.get("data") or {}) == (data.data or {})
        for suggested in suggestions.get("actions", [])
    )


async def _continue(
    services: Services, client_id: str, data: ActionRequest, conversation: Conversation, outcome: ContinueConversation
) -> Turn:
    question = conversation.last_question()
    if outcome.regenerate:
        latest = conversation.records.get(question.id or "", {}) if question is not None else {}
        if question is None or latest.get("assistant_id") != data.message_id:
            raise ApiError(409, "CONFLICT", "Only the latest answer can be written again.")
        message = NewMessage(question.text, question.id or new_id())
    else:
        message = NewMessage(storable(outcome.text, "action"), data.user_message_id or new_id())
    options = AnswerOptions(
        stream_mode=data.stream_mode or services.settings.answers.stream_mode,
        profile_id=outcome.profile_id,
        regenerate=outcome.regenerate,
        resumable=True,
    )
    return await services.answers.start(client_id, data.conversation_id, message, options)


class ActionController(Controller):
    path = "/api/actions"

    @post(
        "/",
        status_code=200,
        guards=[json_only],
        responses={
            200: ResponseSpec(ActionDone, description="The action's result (or, when it continues, the answer)"),
            202: ResponseSpec(ActionContinued, description="`detach`: the answer runs; resume its stream to read it"),
            **error_responses(400, 404, 406, 409, 413, 429, 500, 503),
        },
        summary="Run a suggested server action: its result, or the new answer it streams",
    )
    async def run(
        self,
        request: AnyRequest,
        data: JSONBody[ActionRequest],
        ctx: Ctx,
        allowance: Allowance,
    ) -> Response[Any]:
        """Annotated as a Response, so each answer keeps its own media type (a stream's, or JSON)."""
        wire = UI_MESSAGE_STREAM if data.detach else choose_wire(request)
        await allowance.spend()
        _check(ctx.services, data)
        await ctx.services.answers.owned(ctx.client_id, data.conversation_id)
        conversation = await load(ctx.services.graph, thread_of(ctx.client_id, data.conversation_id))
        answered = answer_text(conversation, data.message_id)
        if answered is None:
            raise not_found("Message")
        action = ctx.services.graphs.actions.actions[data.action]
        assert action.run is not None, "checked: a server action"
        if not action.free_form and not was_suggested(conversation, data):
            why = "the answer did not suggest this action with this data"
            raise ApiError(400, "NOT_SUGGESTED", f"Not suggested: {why}.", [ErrorDetail("action", why)])
        call = ActionCall(ctx.client_id, data.conversation_id, data.message_id, answered[0], data.data or {})
        try:
            outcome = await action.run(call)
        except Exception:
            log.exception("action %r failed", data.action, extra={"conversation_id": data.conversation_id})
            raise ApiError(500, "ACTION_FAILED", f"The action {data.action!r} failed.") from None
        if isinstance(outcome, ActionResult):
            return Response(ActionDone(action=data.action, result=outcome.result, message=outcome.message))
        turn = await _continue(ctx.services, ctx.client_id, data, conversation, outcome)
        if not data.detach:
            return await stream_answer(turn, wire, data.conversation_id)
        sent = None if outcome.regenerate else turn.request.text
        user_message_id = None if outcome.regenerate else turn.request.user_message_id
        continued = ActionContinued(data.action, user_message_id, sent, turn.request.assistant_message_id)
        return Response(continued, status_code=202)
