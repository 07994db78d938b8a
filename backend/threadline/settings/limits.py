"""The limits' section of the settings: the rate limits, where they are counted, and whose address a caller has."""

from __future__ import annotations

from dataclasses import dataclass

from threadline.settings import Section


@dataclass(frozen=True)
class LimitSettings(Section):
    rate_limit: str  # CHAT_RATE_LIMIT: chat messages per client address (per user when signed in)
    api_rate_limit: str  # API_RATE_LIMIT: every other API request
    chat_stream_rate_limit: str  # CHAT_STREAM_RATE_LIMIT: stream reconnections per visitor
    role_rate_limits: tuple[tuple[str, str], ...]  # AUTH_ROLE_RATE_LIMITS: the chat's limit by role
    rate_limit_storage: str  # RATE_LIMIT_STORAGE: memory://, or redis:// shared by processes
    file_bytes_per_day: int  # FILE_BYTES_PER_DAY: bytes of new files per client address
    trusted_proxies: tuple[str, ...]  # TRUSTED_PROXIES: whose X-Forwarded-For is believed
