"""The rate limits and how a caller's address is read: what exists before the services start."""

from __future__ import annotations

from dataclasses import dataclass

from threadline.http.client_address import ClientAddress
from threadline.http.rate_limit import RateLimit
from threadline.settings.limits import LimitSettings


@dataclass(frozen=True)
class Limits:
    """What exists before the services start: the rate limits and how a caller's address is read."""

    chat: RateLimit
    api: RateLimit
    client_address: ClientAddress
    chat_stream_per_visitor: RateLimit
    chat_by_role: tuple[tuple[str, RateLimit], ...] = ()  # AUTH_ROLE_RATE_LIMITS, in the order they are tried
    # FILE_BYTES_PER_DAY: bytes of new files per client address (per user when signed in), whatever the id.
    file_bytes: RateLimit | None = None

    @classmethod
    def of(cls, settings: LimitSettings) -> Limits:
        return cls(
            chat=RateLimit(settings.rate_limit, settings.rate_limit_storage),
            api=RateLimit(settings.api_rate_limit, settings.rate_limit_storage, namespace="api"),
            client_address=ClientAddress(settings.trusted_proxies),
            chat_stream_per_visitor=RateLimit(
                settings.chat_stream_rate_limit, settings.rate_limit_storage, namespace="chat-stream"
            ),
            chat_by_role=tuple(
                (role, RateLimit(limit, settings.rate_limit_storage, namespace=f"chat-role-{role}"))
                for role, limit in settings.role_rate_limits
            ),
            file_bytes=RateLimit(
                f"{settings.file_bytes_per_day}/day", settings.rate_limit_storage, "file-bytes", sums=True
            ),
        )
