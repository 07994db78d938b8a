"""The answers' section of the settings: what the answer service decides with, and nothing else of them."""

from __future__ import annotations

from dataclasses import dataclass

from threadline.settings import AgentLimits, OnDisconnect, Section


@dataclass(frozen=True)
class AnswerSettings(Section):
    first_token_timeout: float  # CHAT_FIRST_TOKEN_TIMEOUT
    idle_timeout: float  # CHAT_IDLE_TIMEOUT
    total_timeout: float  # CHAT_TOTAL_TIMEOUT
    agent_timeouts: dict[str, AgentLimits]  # THREADLINE_AGENT_TIMEOUTS
    resumable: bool  # CHAT_RESUMABLE: answers are recorded for readers that come later
    on_disconnect: OnDisconnect  # CHAT_ON_DISCONNECT, unless a request says
    answers_per_visitor: int  # CHAT_ANSWERS_PER_VISITOR
    ab_profiles: tuple[str, ...]  # CHAT_AB_PROFILES
    generated_titles: bool  # CHAT_GENERATED_TITLES
    file_quota_bytes: int  # FILE_QUOTA_BYTES: a message's new files are stored within it
