"""The answers' settings: how an answer streams, how long it may take, and what happens when its caller goes."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec

from threadline.settings.reading import Section, SettingsError, env, seconds

StreamMode = Literal["messages", "events"]
MultitaskStrategy = Literal["reject", "interrupt", "enqueue", "rollback"]
OnDisconnect = Literal["cancel", "continue"]


class AgentLimits(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One agent's own time limits (THREADLINE_AGENT_TIMEOUTS), in seconds; an unset one is the server's."""

    first_token: Annotated[float, msgspec.Meta(ge=0.1, le=86_400.0)] | None = None
    idle: Annotated[float, msgspec.Meta(ge=0.1, le=3_600.0)] | None = None
    total: Annotated[float, msgspec.Meta(ge=0.1, le=86_400.0)] | None = None


def agent_limits(raw: str, name: str) -> dict[str, AgentLimits]:
    try:
        return msgspec.json.decode(raw, type=dict[str, AgentLimits])
    except msgspec.DecodeError as error:
        raise SettingsError(
            f'{name} must be a JSON object of agent ids, e.g. {{"Deep Researcher": {{"first_token": 120, '
            f'"idle": 120, "total": 1800}}}} ({error})'
        ) from None


class AnswerSettings(Section, frozen=True, kw_only=True):
    TITLE: ClassVar[str] = "Answers"

    stream_mode: Annotated[
        StreamMode,
        env(
            "CHAT_STREAM_MODE",
            help="`messages` (text, finished tool calls and their results) or `events` (also statuses, tool "
            "arguments as generated, reasoning, tool progress); a request's `streamMode` overrides it",
        ),
    ] = "messages"
    resumable: Annotated[
        bool,
        env(
            "CHAT_RESUMABLE",
            help="record each running answer so `GET /api/chat/{id}/stream` can resume it (see "
            "[Resuming an answer](../guides/resume.md)); `false` saves those writes",
        ),
    ] = True
    on_disconnect: Annotated[
        OnDisconnect,
        env(
            "CHAT_ON_DISCONNECT",
            help="`cancel`: a closed connection stops the answer and saves what it had (seed 004); `continue`: "
            "the answer runs to its end and is saved whole; a request's `onDisconnect` overrides it",
        ),
    ] = "cancel"
    multitask_strategy: Annotated[
        MultitaskStrategy,
        env(
            "CHAT_MULTITASK_STRATEGY",
            help="what a message sent while the visitor's answer still runs does: `reject` (409), `interrupt`, "
            "`enqueue` or `rollback` (see [Resuming an answer](../guides/resume.md)); a request's "
            "`multitaskStrategy` overrides it",
        ),
    ] = "reject"
    first_token_timeout: Annotated[
        float, seconds(), env("CHAT_FIRST_TOKEN_TIMEOUT", help="seconds an answer may take to its first token")
    ] = 10.0
    agent_timeouts: Annotated[
        dict[str, AgentLimits],
        env(
            "THREADLINE_AGENT_TIMEOUTS",
            help="an agent's own limits, a JSON object by agent id: `first_token`, `idle`, `total` in seconds (an "
            "agent that researches for minutes before it speaks, say); the others keep the three above",
            read=agent_limits,
            default="none",
        ),
    ] = msgspec.field(default_factory=dict)
    idle_timeout: Annotated[
        float, seconds(), env("CHAT_IDLE_TIMEOUT", help="seconds an answer may go without an event")
    ] = 30.0
    total_timeout: Annotated[
        float, seconds(86_400.0), env("CHAT_TOTAL_TIMEOUT", help="seconds an answer may take in all")
    ] = 120.0
    answers_per_visitor: Annotated[
        int,
        msgspec.Meta(ge=1, le=100),
        env(
            "CHAT_ANSWERS_PER_VISITOR",
            help="answers one visitor or user may have running at once, each in its own conversation (a "
            "conversation runs one at a time; seed 004's route one per visitor, as its document says)",
        ),
    ] = 3
    generated_titles: Annotated[
        bool,
        env(
            "CHAT_GENERATED_TITLES",
            help="after a conversation's first answer, its model writes a short title for it (one small call; see "
            "[Conversations](../guides/conversations.md#titles)); `false` keeps the first message's words",
        ),
    ] = True
    ab_profiles: Annotated[
        tuple[str, ...],
        env(
            "CHAT_AB_PROFILES",
            help="two profile ids, `a,b`: every new message is answered by both, side by side, for a vote (see "
            "[A/B comparisons](../guides/comparisons.md))",
            read=lambda raw, name: tuple(part.strip() for part in raw.split(",")),
        ),
    ] = ()
