"""POST /api/chat: one new user message in, the answer out as an AI SDK UI Message Stream; and stopping it."""

from __future__ import annotations

import secrets

from litestar import Controller, Request, delete, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody
from litestar.response import Stream

from threadline import events as ev
from threadline.encoders import ui_message_stream
from threadline.errors import ApiError, error_responses, json_only, not_found
from threadline.graph import TurnRequest, last_user_index
from threadline.routes.conversations import ConversationId
from threadline.schemas import MAX_MESSAGE_CHARS, CancelRequest, CancelResult, ChatRequest, ErrorDetail
from threadline.turns import Turn

PRE_STREAM_FAILURE = 500


def new_id() -> str:
    return secrets.token_hex(8)


def _invalid(field: str, message: str) -> ApiError:
    return ApiError(400, "VALIDATION_ERROR", f"Invalid request: {message}", [ErrorDetail(field, message)])


async def _check_rate(request: Request, state: State) -> None:
    retry_after = await state.rate_limit.hit(state.client_address.of(request.scope))
    if retry_after is not None:
        seconds = int(retry_after)
        raise ApiError(429, "RATE_LIMITED", f"Too many requests. Try again in {seconds} s.",
                       headers={"retry-after": str(seconds)}, retry_after=seconds)


async def _cancel(state: State, conversation_id: str, client_id: str) -> CancelResult:
    if await state.storage.conversations.get(conversation_id, client_id) is None:
        raise not_found()
    if not await state.active_turns.cancel(conversation_id, client_id):
        raise ApiError(409, "CONFLICT", "No answer is streaming in this conversation: it has already finished.")
    return CancelResult(cancelled=True, conversation_id=conversation_id)


class ChatController(Controller):
    path = "/api"

    @post("/chat", status_code=200, guards=[json_only], responses=error_responses(400, 404, 409, 413, 429, 500, 503),
          summary="Send a message; the answer streams back (UI Message Stream)")
    async def chat(self, request: Request, data: JSONBody[ChatRequest], state: State,
                   client_id: NamedDependency[str]) -> Stream:
        """Only the last message is read: the history comes from the conversation's checkpoint."""
        await _check_rate(request, state)
        conversation_id = data.id or new_id()
        graph = state.graph
        regenerate = data.trigger == "regenerate-message"
        if regenerate:
            if await state.storage.conversations.get(conversation_id, client_id) is None:
                raise not_found()
            snapshot = await graph.aget_state({"configurable": {"thread_id": conversation_id}})
            messages = snapshot.values.get("messages", [])
            index = last_user_index(messages)
            if index is None:
                raise not_found()
            text = messages[index].text
            user_message_id = messages[index].id
        else:
            last = data.messages[-1]
            if last.role != "user":
                raise _invalid("messages", "the last message must have role 'user'")
            text = last.text.strip()
            if not text:
                raise _invalid("messages", "the message is empty")
            if len(text) > MAX_MESSAGE_CHARS:
                raise _invalid("messages", f"the message is longer than {MAX_MESSAGE_CHARS} characters")
            user_message_id = last.id or new_id()
        if not await state.storage.conversations.touch(conversation_id, client_id, text):
            raise not_found()  # someone else's: the same answer as for an id that does not exist
        turn_request = TurnRequest(user_message_id=user_message_id, text=text, regenerate=regenerate,
                                   assistant_message_id=new_id(), model=state.model_label, created_at=ev.timestamp())
        turn = Turn(graph, conversation_id, client_id, turn_request, stream_mode=state.settings.stream_mode,
                    timeouts=state.timeouts)
        await state.active_turns.begin(turn)
        opening = await turn.opening()
        if opening and isinstance(opening[-1], ev.Error):
            # Nothing was shown yet, so the failure can still be an HTTP status the client checks first.
            failure = opening[-1]
            raise ApiError(PRE_STREAM_FAILURE, failure.code, failure.message)
        return Stream(
            ui_message_stream.encode(turn.events(opening)),
            media_type=ui_message_stream.MEDIA_TYPE,
            headers={**ui_message_stream.HEADERS, "x-conversation-id": conversation_id},
        )

    @post("/cancel_stream", status_code=200, guards=[json_only], responses=error_responses(400, 404, 409, 413, 503),
          summary="Stop the answer streaming in a conversation; keeps what arrived")
    async def cancel_stream(self, data: JSONBody[CancelRequest], state: State,
                            client_id: NamedDependency[str]) -> CancelResult:
        return await _cancel(state, data.conversation_id, client_id)

    @delete("/chat/{conversation_id:str}/stream", status_code=200, responses=error_responses(400, 404, 409, 503),
            summary="Stop the answer streaming in a conversation; keeps what arrived")
    async def stop_stream(self, state: State, client_id: NamedDependency[str],
                          conversation_id: str = ConversationId) -> CancelResult:
        return await _cancel(state, conversation_id, client_id)
