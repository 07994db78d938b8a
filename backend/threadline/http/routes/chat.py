"""POST /api/chat: one new user message in, the answer out as an AI SDK UI Message Stream; and stopping it.

`start_turn` starts an answer for every chat route (the seed contracts' too), so each of them is only
its validation and its wire.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import uuid
from datetime import UTC, datetime
from functools import partial
from typing import Any

import msgspec
from litestar import Controller, Response, delete, get, post
from litestar.di import NamedDependency
from litestar.openapi import ResponseSpec
from litestar.params import JSONBody
from litestar.response import Stream

from threadline.agent.graph import TurnRequest
from threadline.agent.profiles import Profile
from threadline.answers import events as ev
from threadline.answers.turn import Stop, Turn, decline_waiting, roll_back
from threadline.conversations import approvals
from threadline.conversations.approvals import ApprovalResponse
from threadline.conversations.comparisons import ComparedAnswer, Comparison, Side, kept_answer
from threadline.conversations.state import answer_messages, answer_text, branch_of, copy_conversation, load, thread_of
from threadline.http.errors import AnyRequest, ApiError, error_responses, json_only, not_found
from threadline.http.routes import AppServices
from threadline.http.routes.conversations import ConversationId
from threadline.http.schemas import (
    MAX_MESSAGE_CHARS,
    CancelRequest,
    CancelResult,
    ChatRequest,
    ErrorDetail,
    UIMessageIn,
)
from threadline.http.services import Services
from threadline.wires import BY_MEDIA_TYPE, UI_MESSAGE_STREAM, WIRES, Wire

log = logging.getLogger(__name__)

PRE_STREAM_FAILURE = 500


def new_id() -> str:
    return secrets.token_hex(8)


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


def comparison_pair(services: Services, requested: list[str] | None) -> tuple[Profile, Profile] | None:
    """The two profiles a new message is compared on: the request's `compareProfiles`, else CHAT_AB_PROFILES."""
    ids = requested or services.settings.ab_profiles
    if not ids:
        return None
    if len(ids) != 2 or ids[0] == ids[1]:
        raise _invalid("compareProfiles", "name two different profiles")
    profiles = [services.profiles.get(profile_id) for profile_id in ids]
    if profiles[0] is None or profiles[1] is None:
        raise not_found("Profile")
    return profiles[0], profiles[1]


def _invalid(field: str, message: str) -> ApiError:
    return ApiError(400, "VALIDATION_ERROR", f"Invalid request: {message}", [ErrorDetail(field, message)])


def _approval_responses(message: UIMessageIn) -> dict[str, tuple[str, ApprovalResponse]]:
    """The approvals an assistant message answers, by approval id: (tool call id, the response)."""
    responses: dict[str, tuple[str, ApprovalResponse]] = {}
    for part in message.parts:
        if part.state == "approval-responded" and part.approval is not None:
            response = ApprovalResponse(approved=part.approval.approved is True, reason=part.approval.reason)
            responses[part.approval.id] = (part.tool_call_id or "", response)
    if not responses:
        raise _invalid("messages", "the last message must have role 'user', or answer tool approvals")
    return responses


async def resume_turn(
    services: Services,
    client_id: str,
    conversation_id: str,
    responses: dict[str, tuple[str, ApprovalResponse]],
    *,
    stream_mode: str,
    on_disconnect: str | None = None,
) -> Turn:
    """Resume the answer that waits for the person's approvals, once they are checked against what waits in
    the checkpoint; the answer goes on as the same assistant message."""
    if await services.conversations.get(conversation_id, client_id) is None:
        raise not_found()
    thread_id = thread_of(client_id, conversation_id)
    conversation = await load(services.graph, thread_id)
    try:
        resume = approvals.check(conversation.waiting, responses)
    except approvals.ApprovalError as error:
        status, code = (409, "CONFLICT") if error.conflict else (400, "VALIDATION_ERROR")
        raise ApiError(status, code, str(error)) from None
    question = conversation.last_question()
    assert question is not None and question.id, "an approval waits in a turn, which has a question"
    record = conversation.records.get(question.id, {})
    profile = services.profiles.get(record.get("profile", "")) or services.graphs.default
    request = turn_request(
        profile, question.text, user_message_id=question.id, assistant_message_id=record.get("assistant_id") or new_id()
    )
    request["resume"] = resume
    turn = new_turn(
        services,
        thread_id,
        conversation_id,
        client_id,
        request,
        stream_mode=stream_mode,
        resumable=True,
        on_disconnect=on_disconnect,
    )
    conversations = services.conversations
    await services.active_turns.begin(
        turn,
        touch=lambda: conversations.touch(conversation_id, client_id, question.text, new_turn=False),
        discard=partial(conversations.delete, conversation_id, client_id),
    )
    return turn


def _user_text(data: ChatRequest) -> str:
    """The new user message's text, refused when it is empty, too long or holds what PostgreSQL cannot store."""
    last = data.messages[-1]
    if last.role != "user":
        raise _invalid("messages", "the last message must have role 'user'")
    text = last.text.strip()
    if not text:
        raise empty_message("messages")
    if len(text) > MAX_MESSAGE_CHARS:
        raise _invalid("messages", f"the message is longer than {MAX_MESSAGE_CHARS} characters")
    return storable(text, "messages")


def empty_message(field: str) -> ApiError:
    """Every wire words it as seeds 003 and 004 do."""
    return ApiError(400, "VALIDATION_ERROR", "Message cannot be empty", [ErrorDetail(field, "Message is required")])


def storable(text: str, field: str, what: str = "message") -> str:
    """`text`, refused when PostgreSQL could not store it (a NUL) or it is not valid Unicode."""
    if "\x00" in text:
        raise _invalid(field, f"the {what} contains a NUL character (U+0000), which cannot be stored")
    try:
        text.encode()
    except UnicodeEncodeError:
        raise _invalid(field, f"the {what} contains an unpaired surrogate, which is not valid Unicode") from None
    return text


async def profile_for(services: Services, client_id: str, conversation_id: str, requested: str | None) -> Profile:
    """The profile asked for (404 when there is none by that id), else the one the conversation went on with,
    else the default. With a single profile, nothing is read."""
    if requested is not None:
        if (profile := services.profiles.get(requested)) is None:
            raise not_found("Profile")
        return profile
    if len(services.profiles) > 1:
        row = await services.conversations.get(conversation_id, client_id)
        if row is not None and row.profile_id in services.profiles:
            return services.profiles[row.profile_id]
    return services.graphs.default


def turn_request(
    profile: Profile,
    text: str,
    *,
    user_message_id: str,
    assistant_message_id: str,
    regenerate: bool = False,
    comparison_id: str = "",
    interactive: bool = True,
) -> TurnRequest:
    request = TurnRequest(
        user_message_id=user_message_id,
        text=text,
        regenerate=regenerate,
        assistant_message_id=assistant_message_id,
        model=profile.model_label,
        profile=profile.id,
        created_at=ev.timestamp(),
        trace_id=uuid.uuid4().hex,  # 32 hex digits: also a valid OpenTelemetry and Langfuse trace id
    )
    if comparison_id:
        request["comparison_id"] = comparison_id
    if not interactive:
        request["interactive"] = False
    return request


def new_turn(
    services: Services,
    thread_id: str,
    conversation_id: str,
    client_id: str,
    request: TurnRequest,
    *,
    stream_mode: str,
    keep_failed_answer: bool = True,
    resumable: bool = False,
    on_disconnect: str | None = None,
) -> Turn:
    """`resumable`: the answer's UI Message Stream is recorded, so GET /api/chat/{id}/stream can resume it
    (unless CHAT_RESUMABLE=false); then `on_disconnect` (else CHAT_ON_DISCONNECT) says whether it goes on
    when its reader goes away."""
    recordings = services.recordings
    resumable = resumable and services.settings.resumable
    on_disconnect = on_disconnect or services.settings.on_disconnect
    return Turn(
        services.graphs.of(request["profile"]),
        thread_id,
        conversation_id,
        client_id,
        request,
        stream_mode=stream_mode,
        timeouts=services.timeouts,
        observability=services.observability,
        keep_failed_answer=keep_failed_answer,
        tools=services.graphs.tools,
        recording=recordings.start(thread_id, request["assistant_message_id"]) if resumable else None,
        continue_on_disconnect=resumable and on_disconnect == "continue",
    )


async def start_turn(
    services: Services,
    client_id: str,
    conversation_id: str,
    text: str,
    *,
    user_message_id: str,
    assistant_message_id: str,
    regenerate: bool = False,
    stream_mode: str,
    keep_failed_answer: bool = True,
    profile_id: str | None = None,
    comparison_id: str = "",
    interactive: bool = True,
    resumable: bool = False,
    strategy: str = "reject",
    on_disconnect: str | None = None,
) -> Turn:
    """Start one answer in the visitor's conversation, whichever wire will carry it, on the profile
    `profile_for` chooses. Refused when the visitor already has one running, when the conversation's A/B
    comparison waits for a vote, or when a storage limit is reached."""
    conversations = services.conversations
    profile = await profile_for(services, client_id, conversation_id, profile_id)
    if len(services.profiles) > 1 and not comparison_id:  # a comparison needs two profiles
        await refuse_while_unvoted(services, client_id, conversation_id)
    if strategy != "reject":
        await make_room(services, client_id, strategy)
    request = turn_request(
        profile,
        text,
        user_message_id=user_message_id,
        assistant_message_id=assistant_message_id,
        regenerate=regenerate,
        comparison_id=comparison_id,
        interactive=interactive,
    )
    thread_id = thread_of(client_id, conversation_id)
    turn = new_turn(
        services,
        thread_id,
        conversation_id,
        client_id,
        request,
        stream_mode=stream_mode,
        keep_failed_answer=keep_failed_answer,
        resumable=resumable,
        on_disconnect=on_disconnect,
    )
    await services.active_turns.begin(
        turn,
        touch=lambda: conversations.touch(
            conversation_id, client_id, text, new_turn=not regenerate, profile_id=profile.id
        ),
        discard=partial(conversations.delete, conversation_id, client_id),
    )
    if len(services.profiles) > 1:
        # The conversation moves on: no vote can change the continuation of its earlier comparisons any more,
        # so the answers they kept for that go (their texts stay in the records).
        services.keep(_settle(services, client_id, conversation_id))
    return turn


async def make_room(services: Services, client_id: str, strategy: str) -> None:
    """Double-texting: end or wait for the visitor's running answer before the new one starts. A visitor has
    one answer at a time, so this is their running answer in whichever conversation it runs. `interrupt`
    stops it and keeps what it said; `rollback` stops it and takes its question out too (only when the stop
    cut it short: an answer that ended first, in another process say, stays); `enqueue` waits for it to
    end. (`reject`, the default, leaves it: the new message is refused with 409.)"""
    running = await services.active_turns.running_answer(client_id)
    if running is None:
        return
    thread_id, answer_id = running
    if strategy == "enqueue":
        await services.active_turns.wait_until_idle(thread_id, client_id, services.settings.total_timeout)
    elif await services.active_turns.cancel(thread_id, client_id) and strategy == "rollback":
        await roll_back(services.graph, thread_id, answer_id)


async def _settle(services: Services, client_id: str, conversation_id: str) -> None:
    try:
        await services.storage.comparisons.settle(client_id, conversation_id)
    except Exception:
        log.warning("could not let go of settled comparisons' answers", exc_info=True)


async def refuse_while_unvoted(services: Services, client_id: str, conversation_id: str) -> None:
    if (pending := await services.storage.comparisons.pending(client_id, conversation_id)) is not None:
        raise ApiError(
            409,
            "VOTE_REQUIRED",
            f"Pick the better of the two answers first (POST /api/comparisons/{pending}/vote with "
            '{"preference": "A" | "B" | "tie"}); the conversation goes on with the one you choose.',
        )


async def start_comparison(
    services: Services,
    client_id: str,
    conversation_id: str,
    text: str,
    *,
    user_message_id: str,
    stream_mode: str,
    pair: tuple[Profile, Profile],
) -> Turn:
    """Answer one message twice, on profile A in the conversation and on profile B on a branch forked from
    the same state, so neither sees the other (conversations/comparisons.py). Returns A, which the response
    carries; B is read from GET /api/comparisons/{id}/stream."""
    comparison_id = new_id()
    thread_id = thread_of(client_id, conversation_id)
    await refuse_while_unvoted(services, client_id, conversation_id)
    await services.conversations.touch(conversation_id, client_id, text)  # answer B counts as a turn too
    branch = branch_of(thread_id, comparison_id, "B")
    await copy_conversation(services.graph, thread_id, branch)
    try:
        first = await start_turn(
            services,
            client_id,
            conversation_id,
            text,
            user_message_id=user_message_id,
            assistant_message_id=new_id(),
            stream_mode=stream_mode,
            profile_id=pair[0].id,
            comparison_id=comparison_id,
            resumable=True,
        )
    except BaseException:
        await services.storage.checkpointer.adelete_thread(branch)
        raise
    second_request = turn_request(
        pair[1], text, user_message_id=user_message_id, assistant_message_id=new_id(), comparison_id=comparison_id
    )
    second = new_turn(services, branch, conversation_id, client_id, second_request, stream_mode=stream_mode)
    comparison = Comparison(
        id=comparison_id,
        conversation_id=conversation_id,
        user_message_id=user_message_id,
        created_at=datetime.now(UTC),
        a=compared(first.request),
        b=compared(second_request),
    )
    try:
        await services.storage.comparisons.add(client_id, comparison)
    except BaseException:
        first.stop(Stop.CANCELLED)
        raise
    services.active_turns.begin_branch(second)
    services.second_answers[comparison_id] = second
    services.keep(_keep_answer(services, comparison_id, "A", first))
    services.keep(_keep_answer(services, comparison_id, "B", second))
    return first


def compared(request: TurnRequest) -> ComparedAnswer:
    return ComparedAnswer(
        profile=request["profile"],
        model=request["model"],
        message_id=request["assistant_message_id"],
        trace_id=request["trace_id"],
    )


SECOND_ANSWER_KEPT = 120.0  # seconds an unread second answer's stream waits for its reader after it ended


async def _keep_answer(services: Services, comparison_id: str, side: Side, turn: Turn) -> None:
    """Once an answer of a comparison has ended, keep its text, messages and record in the comparison's
    record; B's branch is then deleted: a vote for B puts the kept answer in the conversation."""
    await turn.finished()
    if side == "B":
        asyncio.get_running_loop().call_later(SECOND_ANSWER_KEPT, services.second_answers.pop, comparison_id, None)
    try:
        conversation = await load(turn.graph, turn.thread_id)
        answer_id = turn.request["assistant_message_id"]
        text, finish_reason = answer_text(conversation, answer_id) or ("", "error")
        answer = msgspec.structs.replace(compared(turn.request), text=text, finish_reason=finish_reason)
        question, messages = answer_messages(conversation, answer_id) or ("", [])
        kept = kept_answer(messages, conversation.records.get(question, {}))
        await services.storage.comparisons.answered(turn.client_id, comparison_id, side, answer, kept)
        if side == "B":
            await services.storage.checkpointer.adelete_thread(turn.thread_id)
    except Exception:
        log.exception("could not record an A/B answer", extra={"conversation_id": turn.conversation_id})


async def _cancel(services: Services, conversation_id: str, client_id: str) -> CancelResult:
    """A running answer is stopped even before its conversation is recorded; otherwise 404 or 409. The answer
    is looked for again once the conversation is found: it may have started while the stop was on its way."""
    thread_id = thread_of(client_id, conversation_id)
    if await services.active_turns.cancel(thread_id, client_id):
        return CancelResult(cancelled=True, conversation_id=conversation_id)
    if await services.conversations.get(conversation_id, client_id) is None:
        raise not_found()
    if await services.active_turns.cancel(thread_id, client_id):
        return CancelResult(cancelled=True, conversation_id=conversation_id)
    if await decline_waiting(services.graph, thread_id):  # an answer waiting for approval ends too
        return CancelResult(cancelled=True, conversation_id=conversation_id)
    raise ApiError(409, "CONFLICT", "No answer is streaming in this conversation: it has already finished.")


async def stream_answer(turn: Turn, wire: Wire, conversation_id: str) -> Stream:
    opening = await turn.opening()
    if opening and isinstance(opening[-1], ev.Error):
        # Nothing was shown yet, so the failure can still be an HTTP status the client checks first. The
        # answer is let finish closing first, so a retry sent at once is not refused as a second answer.
        failure = opening[-1]
        await turn.finished()
        raise ApiError(PRE_STREAM_FAILURE, failure.code, failure.message)
    return Stream(
        wire.encode(turn.events(opening)),
        media_type=wire.media_type,
        headers={**wire.headers, "x-conversation-id": conversation_id},
    )


class ChatController(Controller):
    path = "/api"

    @post(
        "/chat",
        status_code=200,
        guards=[json_only],
        responses={
            200: ResponseSpec(
                dict[str, Any], media_type=UI_MESSAGE_STREAM.media_type, description="The answer, chunk by chunk"
            ),
            **error_responses(400, 404, 406, 409, 413, 429, 500, 503),
        },
        summary="Send a message; the answer streams back (UI Message Stream, NDJSON or AI SDK 4 data stream)",
        description="The UI Message Stream by default; `Accept: application/x-ndjson` for NDJSON, "
        "`?protocol=data-stream` for the AI SDK 4 data stream (see the README).",
    )
    async def chat(
        self,
        request: AnyRequest,
        data: JSONBody[ChatRequest],
        services: AppServices,
        client_id: NamedDependency[str],
    ) -> Stream:
        """Only the last message is read: the history comes from the conversation's checkpoint."""
        wire = choose_wire(request)
        await services.limits.chat.check(services.limits.client_address.of(request.scope))
        conversation_id = data.id or new_id()
        thread_id = thread_of(client_id, conversation_id)
        conversations = services.conversations
        graph = services.graph
        regenerate = data.trigger == "regenerate-message"
        stream_mode = data.stream_mode or services.settings.stream_mode
        if not regenerate and data.messages[-1].role == "assistant":
            responses = _approval_responses(data.messages[-1])
            turn = await resume_turn(
                services,
                client_id,
                conversation_id,
                responses,
                stream_mode=stream_mode,
                on_disconnect=data.on_disconnect,
            )
            return await stream_answer(turn, wire, conversation_id)
        pair = None if regenerate else comparison_pair(services, data.compare_profiles)
        if regenerate:
            if await conversations.get(conversation_id, client_id) is None:
                raise not_found()
            question = (await load(graph, thread_id)).last_question()
            if question is None:
                raise not_found()
            text: str = question.text
            user_message_id = question.id or new_id()
        else:
            text = _user_text(data)
            user_message_id = data.messages[-1].id or new_id()
        if pair is not None:
            turn = await start_comparison(
                services,
                client_id,
                conversation_id,
                text,
                user_message_id=user_message_id,
                stream_mode=stream_mode,
                pair=pair,
            )
        else:
            turn = await start_turn(
                services,
                client_id,
                conversation_id,
                text,
                user_message_id=user_message_id,
                assistant_message_id=new_id(),
                regenerate=regenerate,
                stream_mode=stream_mode,
                profile_id=data.profile_id,
                resumable=True,
                strategy=data.multitask_strategy or services.settings.multitask_strategy,
                on_disconnect=data.on_disconnect,
            )
        return await stream_answer(turn, wire, conversation_id)

    @post(
        "/cancel_stream",
        status_code=200,
        guards=[json_only],
        responses=error_responses(400, 404, 409, 413, 503),
        summary="Stop the answer streaming in a conversation; keeps what arrived",
    )
    async def cancel_stream(
        self, data: JSONBody[CancelRequest], services: AppServices, client_id: NamedDependency[str]
    ) -> CancelResult:
        return await _cancel(services, data.conversation_id, client_id)

    @delete(
        "/chat/{conversation_id:str}/stream",
        status_code=200,
        responses=error_responses(400, 404, 409, 503),
        summary="Stop the answer streaming in a conversation; keeps what arrived",
    )
    async def stop_stream(
        self, services: AppServices, client_id: NamedDependency[str], conversation_id: str = ConversationId
    ) -> CancelResult:
        return await _cancel(services, conversation_id, client_id)

    @get(
        "/chat/{conversation_id:str}/stream",
        responses={
            200: ResponseSpec(
                dict[str, Any], media_type=UI_MESSAGE_STREAM.media_type, description="The running answer, replayed"
            ),
            **error_responses(400, 404, 503),
        },
        summary="Resume the answer streaming in a conversation: from its first chunk, then live; 204 when none runs",
        description="What `useChat({resume: true})` asks for after a reload. Works from any process.",
    )
    async def resume_stream(
        self, services: AppServices, client_id: NamedDependency[str], conversation_id: str = ConversationId
    ) -> Stream | Response[None]:
        if await services.conversations.get(conversation_id, client_id) is None:
            raise not_found()
        replay = await services.recordings.resume(thread_of(client_id, conversation_id))
        if replay is None:
            return Response(None, status_code=204)
        return Stream(replay, media_type=UI_MESSAGE_STREAM.media_type, headers=UI_MESSAGE_STREAM.headers)
