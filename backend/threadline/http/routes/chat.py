"""POST /api/chat: one new user message in, the answer out as an AI SDK UI Message Stream; stopping and
resuming it. The answer itself is the answer service's (answers/service.py); this is its HTTP face."""

from __future__ import annotations

import re
from typing import Any

from litestar import Controller, Request, Response, delete, get, post
from litestar.connection import ASGIConnection
from litestar.handlers import BaseRouteHandler
from litestar.openapi import ResponseSpec
from litestar.params import JSONBody
from litestar.response import Stream

from threadline.answers.options import AnswerOptions, NewMessage, new_id
from threadline.answers.turn import Turn
from threadline.conversations.approvals import ApprovalResponse
from threadline.conversations.browser_calls import BrowserOutput
from threadline.http.attachments import attached_files
from threadline.http.dependencies import Allowance, ChatAllowance, ConversationId, Ctx
from threadline.http.errors import AnyRequest, error_responses, json_only, too_large_body
from threadline.http.messages import browser_tools, checked_text, invalid, small_value, storable
from threadline.http.schemas import (
    MAX_BODY_BYTES,
    MAX_FILES_BODY_BYTES,
    CancelRequest,
    CancelResult,
    ChatRequest,
    UIMessageIn,
)
from threadline.http.streams import choose_wire, stream_answer
from threadline.runtime import Services
from threadline.wires.registry import UI_MESSAGE_STREAM

# A file part's data URL, as it appears in the raw body: a JSON string cannot hold an unescaped quote, so
# these bytes are a real "url" key's value, never text inside another string.
DATA_URL = re.compile(rb'"url"\s*:\s*"data:[^"]*"')


async def within_body_budget(connection: ASGIConnection[Any, Any, Any, Any], _handler: BaseRouteHandler) -> None:
    """Guard: the body is measured before it is decoded. Only the bytes of files (data URLs) get the route's
    larger limit; everything else in it (messages, values, inputs) shares MAX_BODY_BYTES, so a body of many
    small objects, or one large value, is refused before it takes any memory beyond its own bytes."""
    assert isinstance(connection, Request)
    body = await connection.body()
    if len(body) > MAX_BODY_BYTES and len(body) - sum(map(len, DATA_URL.findall(body))) > MAX_BODY_BYTES:
        raise too_large_body(MAX_BODY_BYTES)


def approval_responses(message: UIMessageIn) -> dict[str, tuple[str, ApprovalResponse]]:
    """The approvals an assistant message answers, by approval id: (tool call id, the response)."""
    responses: dict[str, tuple[str, ApprovalResponse]] = {}
    for part in message.parts:
        if part.state == "approval-responded" and part.approval is not None:
            response = ApprovalResponse(approved=part.approval.approved is True, reason=part.approval.reason)
            if part.approval.edited_input is not None:
                response["edited_input"] = small_value(part.approval.edited_input, "editedInput")
            responses[part.approval.id] = (part.tool_call_id or "", response)
    return responses


def browser_outputs(message: UIMessageIn) -> dict[str, BrowserOutput]:
    """The outputs an assistant message carries, by tool call id (`addToolOutput`'s): of the browser tools' calls
    that wait, and of the answer's other calls, which the answer service does not read."""
    outputs: dict[str, BrowserOutput] = {}
    for part in message.parts:
        if part.tool_call_id and part.state == "output-available":
            outputs[part.tool_call_id] = BrowserOutput(output=small_value(part.output, "output"))
        elif part.tool_call_id and part.state == "output-error":
            outputs[part.tool_call_id] = BrowserOutput(error=storable(part.error_text or "", "errorText", "error"))
    return outputs


async def new_message(
    services: Services, client_id: str, data: ChatRequest, allowance: ChatAllowance, edited: str | None = None
) -> NewMessage:
    """The request's new user message: its last, which must be the user's; its text may be empty when it
    carries files, which are stored once everything else about it is found valid. An edit keeps the id of
    the message it replaces."""
    last = data.messages[-1]
    if last.role != "user":
        raise invalid("messages", "the last message must have role 'user'")
    with_files = any(part.type == "file" for part in last.parts)
    text = checked_text(last.text, "messages") if last.text.strip() or not with_files else ""
    files = await attached_files(services, client_id, last.parts, allowance)
    return NewMessage(text, edited or last.id or new_id(), files=files)


async def options_of(services: Services, data: ChatRequest, client_id: str, conversation_id: str) -> AnswerOptions:
    """How the answer runs, with the conversation's agent chosen first: its own input and context are checked
    against that agent's schemas."""
    settings = services.settings.answers
    agent_id = await services.answers.agent_for(client_id, conversation_id, data.agent)
    return AnswerOptions(
        stream_mode=data.stream_mode or settings.stream_mode,
        profile_id=data.profile_id,
        agent_id=agent_id,
        strategy=data.multitask_strategy or settings.multitask_strategy,
        on_disconnect=data.on_disconnect,
        resumable=True,
        context=request_context(services, data.context, agent_id),
        input=request_input(services, data.input, agent_id),
        browser_tools=browser_tools(data.tools),
    )


def request_input(services: Services, values: dict[str, Any] | None, agent_id: str) -> dict[str, Any]:
    """The chat body's `input`: keys of the agent's own input, each of the type its input schema says."""
    if not values:
        return {}
    small_value(values, "input")
    if problem := services.answers.graphs.hosting_of(agent_id).own_input.problem(values):
        raise invalid("input", problem)
    return values


def request_context(services: Services, values: dict[str, Any] | None, agent_id: str) -> dict[str, Any]:
    """The chat body's `context`: only the keys the operator lets a request set, with values the agent's own
    context schema takes."""
    if not values:
        return {}
    small_value(values, "context")
    if unknown := sorted(set(values) - set(services.settings.agents.request_context)):
        allowed = ", ".join(services.settings.agents.request_context) or "none (THREADLINE_REQUEST_CONTEXT is empty)"
        raise invalid("context", f"a request cannot set {', '.join(unknown)}; it may set {allowed}")
    if problem := services.answers.graphs.context_problem(values, agent_id):
        raise invalid("context", problem)
    return values


async def answered_tools(
    services: Services, client_id: str, conversation_id: str, message: UIMessageIn, options: AnswerOptions
) -> Turn:
    """An assistant message sent back: it answers the tool approvals it asks for, or the browser tools' calls
    that wait with their outputs; the answer that waited goes on."""
    if responses := approval_responses(message):
        return await services.answers.answer_approvals(client_id, conversation_id, responses, options)
    if outputs := browser_outputs(message):
        return await services.answers.answer_browser_calls(client_id, conversation_id, outputs, options)
    raise invalid("messages", "the last message must have role 'user', or answer tool approvals or browser tools")


class ChatController(Controller):
    path = "/api"

    @post(
        "/chat",
        status_code=200,
        guards=[json_only, within_body_budget],
        request_max_body_size=MAX_FILES_BODY_BYTES,  # a message's files come inside it, as data URLs
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
        ctx: Ctx,
        allowance: Allowance,
    ) -> Stream:
        """Only the last message is read: the history comes from the conversation's checkpoint. A body over
        1 MB is for the bytes of files only."""
        wire = choose_wire(request)
        await allowance.spend()
        answers, conversation_id = ctx.services.answers, data.id or new_id()
        options = await options_of(ctx.services, data, ctx.client_id, conversation_id)
        if data.resume is not None:
            value, question_id = small_value(data.resume.value, "resume.value"), data.resume.interrupt_id
            turn = await answers.answer_question(ctx.client_id, conversation_id, question_id, value, options)
        elif data.trigger == "regenerate-message":
            turn = await answers.regenerate(ctx.client_id, conversation_id, options, data.message_id)
        elif data.message_id is not None and data.messages[-1].role == "user":  # useChat's edit of a message
            message = await new_message(ctx.services, ctx.client_id, data, allowance, data.message_id)
            turn = await answers.edit(ctx.client_id, conversation_id, message, options)
        elif data.messages[-1].role == "assistant":
            turn = await answered_tools(ctx.services, ctx.client_id, conversation_id, data.messages[-1], options)
        elif (pair := answers.comparison_pair(data.compare_profiles)) is not None:
            compared = AnswerOptions(options.stream_mode, agent_id=options.agent_id, context=options.context)
            message = await new_message(ctx.services, ctx.client_id, data, allowance)
            turn = await answers.compare(ctx.client_id, conversation_id, message, pair, compared)
        else:
            turn = await answers.start(
                ctx.client_id, conversation_id, await new_message(ctx.services, ctx.client_id, data, allowance), options
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
        self,
        data: JSONBody[CancelRequest],
        ctx: Ctx,
    ) -> CancelResult:
        await ctx.services.answers.stop(ctx.client_id, data.conversation_id)
        return CancelResult(cancelled=True, conversation_id=data.conversation_id)

    @delete(
        "/chat/{conversation_id:str}/stream",
        status_code=200,
        responses=error_responses(400, 404, 409, 503),
        summary="Stop the answer streaming in a conversation; keeps what arrived",
    )
    async def stop_stream(self, ctx: Ctx, conversation_id: str = ConversationId) -> CancelResult:
        await ctx.services.answers.stop(ctx.client_id, conversation_id)
        return CancelResult(cancelled=True, conversation_id=conversation_id)

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
    async def resume_stream(self, ctx: Ctx, conversation_id: str = ConversationId) -> Stream | Response[None]:
        replay = await ctx.services.answers.replay(ctx.client_id, conversation_id)
        if replay is None:
            return Response(None, status_code=204)
        wire = UI_MESSAGE_STREAM  # what `useChat` resumes
        return Stream(wire.encode(replay), media_type=wire.media_type, headers=wire.headers)
