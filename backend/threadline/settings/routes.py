"""The routes' section of the settings: what a request falls back on, and the bounds a route checks itself."""

from __future__ import annotations

from dataclasses import dataclass

from threadline.settings import MultitaskStrategy, Section, StreamMode


@dataclass(frozen=True)
class RouteSettings(Section):
    stream_mode: StreamMode  # CHAT_STREAM_MODE, unless a request says
    multitask_strategy: MultitaskStrategy  # CHAT_MULTITASK_STRATEGY, unless a request says
    resumable: bool  # CHAT_RESUMABLE: whether an answer may be detached from its request
    request_context: tuple[str, ...]  # THREADLINE_REQUEST_CONTEXT: the context keys a chat body may set
    starters: tuple[str, ...]  # CHAT_STARTERS: the welcome screen's suggestions
    tool_output_preview: int  # seed 002's tool output, cut to this many characters
    file_quota_bytes: int  # FILE_QUOTA_BYTES: an upload is stored within it
    file_bytes_per_day: int  # FILE_BYTES_PER_DAY: how much a day's uploads may hold
