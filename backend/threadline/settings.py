"""Settings read once from the environment and validated, so a typo stops start-up with one clear line."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

from threadline.mcp_client.config import DEFAULT_SERVERS, McpConfigError, McpServerConfig, parse_servers

PROVIDERS = ("gemini", "openai", "demo")
MEMORY_BACKENDS = ("postgres", "memory")
STREAM_MODES = ("messages", "events")
DEFAULT_MODEL_NAMES = {"gemini": "gemini-1.5-flash", "openai": "gpt-4o-mini", "demo": "demo"}
DEFAULT_FRONTEND_DIR = Path(__file__).resolve().parents[2] / "frontend" / "dist"  # built by `tasks.py serve`
DEFAULT_TRUSTED_PROXIES = ("127.0.0.1/32", "::1/128")
DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant. Use the tools you have when they help, and answer concisely."


class SettingsError(ValueError):
    """A setting has a bad value; the message is one line naming the variable and what it accepts."""


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    model_provider: str = "gemini"
    model_name: str = DEFAULT_MODEL_NAMES["gemini"]
    memory_backend: str = "postgres"
    database_url: str | None = None
    data_dir: Path = Path(".threadline")
    stream_mode: str = "messages"
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    max_model_calls: int = 5
    google_api_key: str | None = None
    gemini_base_url: str | None = None
    openai_api_key: str | None = None
    openai_base_url: str | None = None
    demo_token_delay_ms: float = 15.0
    client_id_secret: str | None = None
    cors_origins: tuple[str, ...] = ()
    rate_limit: str = "10/minute"
    api_rate_limit: str = "600/minute"
    rate_limit_storage: str = "memory://"
    trusted_proxies: tuple[str, ...] = DEFAULT_TRUSTED_PROXIES
    first_token_timeout: float = 10.0
    idle_timeout: float = 30.0
    total_timeout: float = 120.0
    host: str = "127.0.0.1"
    port: int = 8000
    log_level: str = "INFO"
    log_format: str = "text"
    frontend_dir: Path = DEFAULT_FRONTEND_DIR
    mcp_servers: tuple[McpServerConfig, ...] = DEFAULT_SERVERS
    mcp_tool_timeout: float = 10.0
    mcp_secret: str | None = None
    max_turns_per_conversation: int = 500
    max_conversations_per_visitor: int = 500
    max_connections: int = 1000
    header_timeout: float = 10.0
    body_timeout: float = 30.0


DEFAULTS = Settings()


def _choice(env: Mapping[str, str], name: str, allowed: tuple[str, ...], default: str) -> str:
    value = env.get(name, "").strip() or default
    if value not in allowed:
        raise SettingsError(f"{name} must be one of {', '.join(allowed)} (got {value!r})")
    return value


def _number(env: Mapping[str, str], name: str, kind: type, default, minimum, maximum):
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or not minimum <= value <= maximum:
        raise SettingsError(f"{name} must be a {kind.__name__} from {minimum} to {maximum} (got {raw!r})")
    return value


def _optional(env: Mapping[str, str], name: str) -> str | None:
    return env.get(name, "").strip() or None


def _origins(env: Mapping[str, str]) -> tuple[str, ...]:
    origins = tuple(origin.strip() for origin in env.get("CORS_ORIGINS", "").split(",") if origin.strip())
    for origin in origins:
        if not origin.startswith(("http://", "https://")) or origin.endswith("/") or origin.count("/") > 2:
            raise SettingsError(
                f"CORS_ORIGINS must be a comma-separated list of origins like http://localhost:3000 (got {origin!r})"
            )
    return origins


def _rate_limit(env: Mapping[str, str], name: str, default: str) -> str:
    from limits import parse

    value = env.get(name, "").strip() or default
    try:
        parse(value)
    except ValueError:
        raise SettingsError(f"{name} must look like 10/minute or 100/hour (got {value!r})") from None
    return value


def _rate_limit_storage(env: Mapping[str, str]) -> str:
    value = env.get("RATE_LIMIT_STORAGE", "").strip() or "memory://"
    if not value.startswith(("memory://", "redis://", "rediss://")):
        raise SettingsError(f"RATE_LIMIT_STORAGE must be memory:// or a redis:// URL (got {value.split(':')[0]!r}...)")
    return value


def _networks(env: Mapping[str, str]) -> tuple[str, ...]:
    raw = env.get("TRUSTED_PROXIES")
    if raw is None:
        return DEFAULT_TRUSTED_PROXIES
    networks = tuple(item.strip() for item in raw.split(",") if item.strip())
    for network in networks:
        try:
            ipaddress.ip_network(network, strict=False)
        except ValueError:
            raise SettingsError(
                f"TRUSTED_PROXIES must be a comma-separated list of addresses or CIDR ranges (got {network!r})"
            ) from None
    return networks


def _mcp_servers(env: Mapping[str, str]) -> tuple[McpServerConfig, ...]:
    raw = env.get("MCP_SERVERS", "").strip()
    if not raw:
        return DEFAULT_SERVERS
    try:
        return parse_servers(raw, env)
    except McpConfigError as error:
        raise SettingsError(str(error)) from None


def _mcp_secret(env: Mapping[str, str]) -> str | None:
    secret = _optional(env, "MCP_JWT_SECRET")
    if secret is not None and len(secret.encode()) < 32:
        raise SettingsError("MCP_JWT_SECRET must be at least 32 bytes long (shorter HS256 keys can be guessed)")
    return secret


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Build Settings from environment variables; raise SettingsError on the first bad one."""
    env = os.environ if env is None else env
    provider = _choice(env, "CHAT_MODEL_PROVIDER", PROVIDERS, "gemini")
    google_api_key = _optional(env, "GOOGLE_API_KEY") or _optional(env, "GEMINI_API_KEY")
    openai_api_key = _optional(env, "OPENAI_API_KEY")
    openai_base_url = _optional(env, "OPENAI_BASE_URL")
    if provider == "gemini" and not google_api_key:
        raise SettingsError(
            "GOOGLE_API_KEY is required when CHAT_MODEL_PROVIDER=gemini "
            "(or set CHAT_MODEL_PROVIDER to one of openai, demo)"
        )
    if provider == "openai" and not (openai_api_key or openai_base_url):
        raise SettingsError("OPENAI_API_KEY or OPENAI_BASE_URL is required when CHAT_MODEL_PROVIDER=openai")
    database_url = _optional(env, "DATABASE_URL")
    if database_url and not database_url.startswith(("postgresql://", "postgres://")):
        raise SettingsError(f"DATABASE_URL must start with postgresql:// (got {database_url.split(':')[0]!r}...)")
    log_level = env.get("LOG_LEVEL", "").strip().upper() or "INFO"
    if log_level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise SettingsError(f"LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR (got {log_level!r})")
    return Settings(
        model_provider=provider,
        model_name=_optional(env, "CHAT_MODEL_NAME") or DEFAULT_MODEL_NAMES[provider],
        memory_backend=_choice(env, "CHAT_MEMORY_BACKEND", MEMORY_BACKENDS, "postgres"),
        database_url=database_url,
        data_dir=Path(_optional(env, "THREADLINE_DATA_DIR") or ".threadline"),
        stream_mode=_choice(env, "CHAT_STREAM_MODE", STREAM_MODES, "messages"),
        system_prompt=_optional(env, "CHAT_SYSTEM_PROMPT") or DEFAULT_SYSTEM_PROMPT,
        max_model_calls=_number(env, "CHAT_MAX_MODEL_CALLS", int, 5, 1, 50),
        google_api_key=google_api_key,
        gemini_base_url=_optional(env, "GEMINI_BASE_URL"),
        openai_api_key=openai_api_key,
        openai_base_url=openai_base_url,
        demo_token_delay_ms=_number(env, "CHAT_DEMO_TOKEN_DELAY_MS", float, 15.0, 0.0, 10_000.0),
        client_id_secret=_optional(env, "THREADLINE_SECRET"),
        cors_origins=_origins(env),
        rate_limit=_rate_limit(env, "CHAT_RATE_LIMIT", DEFAULTS.rate_limit),
        api_rate_limit=_rate_limit(env, "API_RATE_LIMIT", DEFAULTS.api_rate_limit),
        rate_limit_storage=_rate_limit_storage(env),
        trusted_proxies=_networks(env),
        first_token_timeout=_number(env, "CHAT_FIRST_TOKEN_TIMEOUT", float, 10.0, 0.1, 3600.0),
        idle_timeout=_number(env, "CHAT_IDLE_TIMEOUT", float, 30.0, 0.1, 3600.0),
        total_timeout=_number(env, "CHAT_TOTAL_TIMEOUT", float, 120.0, 0.1, 86400.0),
        host=_optional(env, "THREADLINE_HOST") or "127.0.0.1",
        port=_number(env, "THREADLINE_PORT", int, 8000, 1, 65535),
        log_level=log_level,
        log_format=_choice(env, "LOG_FORMAT", ("text", "json"), "text"),
        frontend_dir=Path(_optional(env, "THREADLINE_FRONTEND_DIR") or DEFAULT_FRONTEND_DIR),
        mcp_servers=_mcp_servers(env),
        mcp_tool_timeout=_number(env, "MCP_TOOL_TIMEOUT", float, 10.0, 0.1, 3600.0),
        mcp_secret=_mcp_secret(env),
        max_turns_per_conversation=_number(
            env, "CHAT_MAX_TURNS", int, DEFAULTS.max_turns_per_conversation, 1, 1_000_000
        ),
        max_conversations_per_visitor=_number(
            env, "CHAT_MAX_CONVERSATIONS", int, DEFAULTS.max_conversations_per_visitor, 1, 1_000_000
        ),
        max_connections=_number(env, "THREADLINE_MAX_CONNECTIONS", int, DEFAULTS.max_connections, 1, 1_000_000),
        header_timeout=_number(env, "THREADLINE_HEADER_TIMEOUT", float, DEFAULTS.header_timeout, 0.1, 3600.0),
        body_timeout=_number(env, "THREADLINE_BODY_TIMEOUT", float, DEFAULTS.body_timeout, 0.1, 3600.0),
    )
