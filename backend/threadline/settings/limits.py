"""The limits' settings: the rate limits, where they are counted, whose address a caller has, and the bounds
on a connection."""

from __future__ import annotations

import ipaddress
from typing import Annotated, ClassVar

import msgspec

from threadline.settings.reading import Section, SettingsError, comma_list, env, seconds

DEFAULT_TRUSTED_PROXIES = ("127.0.0.1/32", "::1/128")


def rate(raw: str, name: str) -> str:
    from limits import parse

    try:
        limit = parse(raw)
    except ValueError:
        raise SettingsError(f"{name} must look like 10/minute or 100/hour (got {raw!r})") from None
    if limit.amount < 1:
        raise SettingsError(f"{name} must allow at least 1 request (got {raw!r}, which refuses every one)")
    return raw


def role_rates(raw: str, name: str) -> tuple[tuple[str, str], ...]:
    """`role=limit` pairs, comma-separated, in the order they are tried."""
    pairs = []
    for item in comma_list(raw, name):
        role, _, limit = item.partition("=")
        if not role.strip() or not limit.strip():
            raise SettingsError(f"{name} must look like pro=100/minute,trial=5/minute (got {item!r})")
        pairs.append((role.strip(), rate(limit.strip(), name)))
    return tuple(pairs)


def rate_storage(raw: str, name: str) -> str:
    if not raw.startswith(("memory://", "redis://", "rediss://")):
        raise SettingsError(f"{name} must be memory:// or a redis:// URL (got {raw.split(':')[0]!r}...)")
    return raw


def networks(raw: str, name: str) -> tuple[str, ...]:
    values = comma_list(raw, name)
    for network in values:
        try:
            parsed = ipaddress.ip_network(network, strict=False)
        except ValueError:
            raise SettingsError(
                f"{name} must be a comma-separated list of addresses or CIDR ranges (got {network!r})"
            ) from None
        if parsed.prefixlen == 0:
            raise SettingsError(
                f"{name} must list your proxies, not every address ({network!r}): any client could then choose the "
                "address its limits are counted by"
            )
    return values


class LimitSettings(Section, frozen=True, kw_only=True):
    TITLE: ClassVar[str] = "Limits"

    rate_limit: Annotated[
        str, env("CHAT_RATE_LIMIT", help="chat requests per client address, e.g. `100/hour`", read=rate)
    ] = "10/minute"
    role_rate_limits: Annotated[
        tuple[tuple[str, str], ...],
        env(
            "AUTH_ROLE_RATE_LIMITS",
            help="with `AUTH_ISSUER`: chat requests per signed-in user by role instead of `CHAT_RATE_LIMIT`, e.g. "
            "`pro=100/minute,trial=5/hour`; a user with several of these roles gets the first listed",
            read=role_rates,
            default="empty: `CHAT_RATE_LIMIT` for everyone",
        ),
    ] = ()
    chat_stream_rate_limit: Annotated[
        str,
        env(
            "CHAT_STREAM_RATE_LIMIT",
            help="seed 004's `POST /api/chat/stream` requests per visitor, on top of `CHAT_RATE_LIMIT` (see "
            "[Seed contracts](../wires/seeds.md))",
            read=rate,
        ),
    ] = "20/minute"
    api_rate_limit: Annotated[
        str, env("API_RATE_LIMIT", help="requests to any endpoint per client address", read=rate)
    ] = "600/minute"
    rate_limit_storage: Annotated[
        str,
        env(
            "RATE_LIMIT_STORAGE",
            help="or `redis://host:6379/0` to share the limits between processes",
            read=rate_storage,
        ),
    ] = "memory://"
    file_bytes_per_day: Annotated[
        int,
        msgspec.Meta(ge=1, le=1 << 50),
        env(
            "FILE_BYTES_PER_DAY",
            help="bytes of new files one client address may send in a day (a signed-in user: per user), however "
            "many anonymous ids it makes",
        ),
    ] = 1024 * 1024 * 1024
    trusted_proxies: Annotated[
        tuple[str, ...],
        env(
            "TRUSTED_PROXIES",
            help="proxies whose `X-Forwarded-For` is believed (addresses or CIDR ranges; empty: none)",
            read=networks,
            empty=True,
        ),
    ] = DEFAULT_TRUSTED_PROXIES
    max_connections: Annotated[
        int,
        msgspec.Meta(ge=1, le=1_000_000),
        env(
            "THREADLINE_MAX_CONNECTIONS",
            help="requests at work before new ones get `503` (idle kept-alive connections are closed to make room)",
        ),
    ] = 1000
    header_timeout: Annotated[
        float, seconds(), env("THREADLINE_HEADER_TIMEOUT", help="seconds a client may take to send a request's headers")
    ] = 10.0
    body_timeout: Annotated[
        float, seconds(), env("THREADLINE_BODY_TIMEOUT", help="seconds a client may take to send a request's body")
    ] = 30.0
