"""POST /api/ag-ui: an AG-UI run (`@ag-ui/client`'s HttpAgent, CopilotKit, assistant-ui) answered from the same
conversations as /api/chat: `threadId` is the conversation's id, under the same identity and rules, so a
conversation goes on in either family of clients. The server owns the history: of the run's messages only the
trailing new user message is read (or the trailing tool messages that answer browser tools' calls), and the run
opens with a snapshot of the stored conversation (wires/ag_ui.py).
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Controller, post
from litestar.openapi import ResponseSpec
from litestar.params import JSONBody
from litestar.response import Stream

from threadline.answers.options import AnswerOptions, NewMessage, new_id
from threadline.answers.turn import Turn
from threadline.conversations.approvals import ApprovalResponse
from threadline.conversations.browser_calls import BrowserOutput
from threadline.conversations.history import ui_messages
from threadline.conversations.state import load
from threadline.http.dependencies import Allowance, Ctx
from threadline.http.errors import AnyRequest, error_responses, json_only
from threadline.http.messages import browser_tools, checked_text, invalid, small_value, storable
from threadline.http.schemas import AgentName, AgUiMessageIn, ResumeEntryIn, RunAgentInput
from threadline.http.streams import stream_answer
from threadline.runtime import Services
from threadline.storage.threads import thread_of
from threadline.wires import ag_ui
from threadline.wires.registry import Wire


def new_text(messages: list[AgUiMessageIn]) -> str:
    """The run's new user message: its last, as text (AG-UI's text parts joined)."""
    last = messages[-1]
    if last.role != "user":
        raise invalid("messages", "the last message must be the new user message (role 'user')")
    if isinstance(last.content, list):
        if any(part.get("type") != "text" for part in last.content):
            raise invalid("messages", "only text content is read: send files through /api/chat")
        return checked_text("".join(str(part.get("text", "")) for part in last.content), "messages")
    return checked_text(last.content or "", "messages")


async def resumed(
    services: Services, client_id: str, conversation_id: str, entries: list[ResumeEntryIn], options: AnswerOptions
) -> Turn:
    """The run's answers to what the last one waited for, checked as /api/chat checks them (a forged or stale id is
    refused, nothing runs twice): the agent's question gets its reply, each approval the person's decision."""
    conversation = await load(services.graph, thread_of(client_id, conversation_id))
    calls = {item.approval_id: item.tool_call_id for item in conversation.approvals}
    if questions := [entry for entry in entries if entry.interrupt_id not in calls]:
        if len(entries) > 1:
            raise invalid("resume", "the agent's question is answered alone")
        (entry,) = questions
        reply = small_value(entry.payload if entry.status == "resolved" else None, "resume.payload")
        return await services.answers.answer_question(client_id, conversation_id, entry.interrupt_id, reply, options)
    responses: dict[str, tuple[str, ApprovalResponse]] = {}
    for entry in entries:
        decision = entry.payload if isinstance(entry.payload, dict) else {}
        approved = entry.status == "resolved" and decision.get("approved") is True
        reason = decision.get("reason") if isinstance(decision.get("reason"), str) else None
        responses[entry.interrupt_id] = (calls[entry.interrupt_id], ApprovalResponse(approved=approved, reason=reason))
    return await services.answers.answer_approvals(client_id, conversation_id, responses, options)


def tool_outputs(messages: list[AgUiMessageIn]) -> dict[str, BrowserOutput]:
    """The trailing tool messages' outputs for browser tools' calls, by tool call id: their text content (AG-UI's
    tool message holds text), or their error."""
    outputs: dict[str, BrowserOutput] = {}
    for message in reversed(messages):
        if message.role != "tool":
            break
        if not message.tool_call_id:
            raise invalid("messages", "a tool message needs the toolCallId it answers")
        if message.error is not None:
            outputs[message.tool_call_id] = BrowserOutput(error=storable(message.error, "messages", "error"))
        else:
            content = message.content if isinstance(message.content, str) else ""
            outputs[message.tool_call_id] = BrowserOutput(output=storable(content, "messages", "tool output"))
    return outputs


def agent_asked(request: AnyRequest, data: RunAgentInput) -> str | None:
    """The agent a new conversation goes to: `forwardedProps.agent`, else `?agent=`, as the chat body's `agent`."""
    props = data.forwarded_props if isinstance(data.forwarded_props, dict) else {}
    asked = props.get("agent", request.query_params.get("agent"))
    try:
        return None if asked is None else msgspec.convert(asked, AgentName)
    except msgspec.ValidationError:
        raise invalid("forwardedProps.agent", "an agent's id as GET /api/agents lists it") from None


async def snapshot(
    services: Services,
    client_id: str,
    conversation_id: str,
    message: NewMessage | None,
    answered: dict[str, BrowserOutput] | None = None,
) -> list[Any]:
    """The stored conversation and the new message, if any, as the run's MESSAGES_SNAPSHOT; with the results of
    browser tools' calls the client sent (`answered`), as the resumed answer will keep them."""
    history = ui_messages(await load(services.graph, thread_of(client_id, conversation_id)), conversation_id)
    for part in (part for answer in history[-1:] for part in answer["parts"]):
        if (output := (answered or {}).get(part.get("toolCallId", ""))) is not None:
            if "error" in output:
                part.update(state="output-error", errorText=output["error"])
            else:
                part.update(state="output-available", output=output.get("output"))
    sent = [{"id": message.id, "role": "user", "parts": [{"type": "text", "text": message.text}]}] if message else []
    return ag_ui.snapshot_messages([*history, *sent])


class AgUiController(Controller):
    path = "/api"

    @post(
        "/ag-ui",
        status_code=200,
        guards=[json_only],
        responses={
            200: ResponseSpec(dict[str, Any], media_type=ag_ui.MEDIA_TYPE, description="AG-UI events, one run"),
            **error_responses(400, 404, 409, 413, 429, 503),
        },
        summary="Run an AG-UI agent: a RunAgentInput in, AG-UI events out (the same conversations as /api/chat)",
    )
    async def run(
        self,
        request: AnyRequest,
        data: JSONBody[RunAgentInput],
        ctx: Ctx,
        allowance: Allowance,
    ) -> Stream:
        """The run's `tools` are browser tools: offered to the agent, run by the client, whose tool messages at the
        end of the next run's `messages` answer them. `resume` answers what the last run waited for; cancelling it
        all with a new message declines it, as a new message on /api/chat does."""
        conversation_id, answers, settings = data.thread_id, ctx.services.answers, ctx.services.settings.answers
        await allowance.spend()
        agent_id = await answers.agent_for(ctx.client_id, conversation_id, agent_asked(request, data))
        options = AnswerOptions(
            stream_mode=settings.stream_mode,
            agent_id=agent_id,
            strategy=settings.multitask_strategy,
            resumable=True,
            browser_tools=browser_tools(data.tools),
        )
        declined = data.resume and all(entry.status == "cancelled" for entry in data.resume)
        answered: frozenset[str] = frozenset()
        if data.resume and not (declined and data.messages[-1].role == "user"):
            messages = await snapshot(ctx.services, ctx.client_id, conversation_id, None)
            turn = await resumed(ctx.services, ctx.client_id, conversation_id, data.resume, options)
        elif data.messages[-1].role == "tool":
            outputs = tool_outputs(data.messages)
            messages = await snapshot(ctx.services, ctx.client_id, conversation_id, None, outputs)
            turn = await answers.answer_browser_calls(ctx.client_id, conversation_id, outputs, options)
            answered = frozenset(outputs)
        else:
            # A fresh id: a client that sent only this message then holds the conversation in order (wires/ag_ui.py).
            message = NewMessage(new_text(data.messages), new_id())
            messages = await snapshot(ctx.services, ctx.client_id, conversation_id, message)
            turn = await answers.start(ctx.client_id, conversation_id, message, options)

        def encode(batches: Any) -> Any:
            return ag_ui.encode(batches, conversation_id, data.run_id, messages, answered)

        return await stream_answer(turn, Wire("ag-ui", ag_ui.MEDIA_TYPE, ag_ui.HEADERS, encode, False), conversation_id)
