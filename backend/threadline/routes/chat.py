"""POST /api/chat: one new user message in, the answer out as an AI SDK UI Message Stream."""

from __future__ import annotations

import secrets

from litestar import Controller, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody
from litestar.response import Stream

from threadline import events as ev
from threadline.encoders import ui_message_stream
from threadline.errors import ApiError, not_found
from threadline.graph import TurnRequest, last_user_index
from threadline.runner import run_turn
from threadline.schemas import MAX_MESSAGE_CHARS, ChatRequest, ErrorDetail


def new_id() -> str:
    return secrets.token_hex(8)


def _invalid(field: str, message: str) -> ApiError:
    return ApiError(400, "VALIDATION_ERROR", f"Invalid request: {message}", [ErrorDetail(field, message)])


class ChatController(Controller):
    path = "/api/chat"

    @post("/", status_code=200, summary="Send a message; the answer streams back (UI Message Stream)")
    async def chat(self, data: JSONBody[ChatRequest], state: State, client_id: NamedDependency[str]) -> Stream:
        """Only the last message is read: the history comes from the conversation's checkpoint."""
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
        request = TurnRequest(user_message_id=user_message_id, text=text, regenerate=regenerate,
                              assistant_message_id=new_id(), model=state.model_label, created_at=ev.timestamp())
        events = run_turn(graph, conversation_id, request, stream_mode=state.settings.stream_mode)
        return Stream(
            ui_message_stream.encode(events),
            media_type=ui_message_stream.MEDIA_TYPE,
            headers={**ui_message_stream.HEADERS, "x-conversation-id": conversation_id},
        )
