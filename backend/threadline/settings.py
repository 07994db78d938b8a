"""Settings read once from the environment and validated, so a typo stops start-up with one clear line."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from threadline.agent.profiles import Profile, ProfileError, parse_profiles
from threadline.mcp.config import DEFAULT_SERVERS, McpConfigError, McpServerConfig, parse_servers

PROVIDERS = ("gemini", "openai", "demo")
MEMORY_BACKENDS = ("postgres", "memory")
STREAM_MODES = ("messages", "events")
# Seed 000 named gemini-1.5-flash, which Google has retired: a real key with it fails.
DEFAULT_MODEL_NAMES = {"gemini": "gemini-2.5-flash", "openai": "gpt-4o-mini", "demo": "demo"}
DEFAULT_FRONTEND_DIR = Path(__file__).resolve().parents[2] / "frontend" / "dist"  # built by `tasks.py serve`
DEFAULT_TRUSTED_PROXIES = ("127.0.0.1/32", "::1/128")
DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant. Use the tools you have when they help, and answer concisely."


class SettingsError(ValueError):
    """A setting has a bad value; the message is one line naming the variable and what it accepts."""


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    model_provider: str = "gemini"
    model_name: str = DEFAULT_MODEL_NAMES["gemini"]
    profiles: tuple[Profile, ...] = ()  # CHAT_PROFILES; empty: the CHAT_MODEL_* variables make the one profile
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
    chat_stream_rate_limit: str = "20/minute"
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
    trace_retention_days: float = 30.0
    resumable: bool = True  # CHAT_RESUMABLE: record running answers so a reload can resume them
    multitask_strategy: str = "reject"  # CHAT_MULTITASK_STRATEGY: a message sent while an answer runs
    on_disconnect: str = "cancel"  # CHAT_ON_DISCONNECT: a closed connection stops the answer, or it goes on
    ab_profiles: tuple[
        str, ...
    ] = ()  # CHAT_AB_PROFILES: every new message answered by these two (conversations/comparisons.py)
    admin_token: str | None = None  # CHAT_ADMIN_TOKEN: what an operator sends to read the A/B results
    actions: tuple[str, ...] = ()  # CHAT_ACTIONS: the application's actions, as `module:attribute` (agent/actions.py)
    tool_output_preview: int = 2_000
    otlp_traces_endpoint: str | None = None
    langfuse_public_key: str | None = None
    langfuse_secret_key: str | None = None
    langfuse_host: str = "https://cloud.langfuse.com"
    max_connections: int = 1000
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    shutdown_grace: float = 30.0  # THREADLINE_SHUTDOWN_GRACE: seconds running answers get to finish on SIGTERM


DEFAULTS = Settings()


# How each environment variable is read. A reader gets the stripped value (never empty: an empty or
# missing variable means the default) and the variable's name for its error message.
Reader = Callable[[str, str], Any]


def text(raw: str, name: str) -> str:
    return raw


def choice(*allowed: str, upper: bool = False) -> Reader:
    def read(raw: str, name: str) -> str:
        value = raw.upper() if upper else raw
        if value not in allowed:
            raise SettingsError(f"{name} must be one of {', '.join(allowed)} (got {raw!r})")
        return value

    return read


def number(kind: type[int] | type[float], minimum: float, maximum: float) -> Reader:
    def read(raw: str, name: str) -> int | float:
        try:
            value = kind(raw)
        except ValueError:
            value = None
        if value is None or not minimum <= value <= maximum:
            raise SettingsError(f"{name} must be a {kind.__name__} from {minimum} to {maximum} (got {raw!r})")
        return value

    return read


def database_url(raw: str, name: str) -> str:
    if not raw.startswith(("postgresql://", "postgres://")):
        raise SettingsError(f"{name} must start with postgresql:// (got {raw.split(':')[0]!r}...)")
    return raw


def origins(raw: str, name: str) -> tuple[str, ...]:
    values = tuple(origin.strip() for origin in raw.split(",") if origin.strip())
    for origin in values:
        if not origin.startswith(("http://", "https://")) or origin.endswith("/") or origin.count("/") > 2:
            raise SettingsError(
                f"{name} must be a comma-separated list of origins like http://localhost:3000 (got {origin!r})"
            )
    return values


def rate(raw: str, name: str) -> str:
    from limits import parse

    try:
        parse(raw)
    except ValueError:
        raise SettingsError(f"{name} must look like 10/minute or 100/hour (got {raw!r})") from None
    return raw


def rate_storage(raw: str, name: str) -> str:
    if not raw.startswith(("memory://", "redis://", "rediss://")):
        raise SettingsError(f"{name} must be memory:// or a redis:// URL (got {raw.split(':')[0]!r}...)")
    return raw


def networks(raw: str, name: str) -> tuple[str, ...]:
    values = tuple(item.strip() for item in raw.split(",") if item.strip())
    for network in values:
        try:
            ipaddress.ip_network(network, strict=False)
        except ValueError:
            raise SettingsError(
                f"{name} must be a comma-separated list of addresses or CIDR ranges (got {network!r})"
            ) from None
    return values


def mcp_secret(raw: str, name: str) -> str:
    if len(raw.encode()) < 32:
        raise SettingsError(f"{name} must be at least 32 bytes long (shorter HS256 keys can be guessed)")
    return raw


def otlp(raw: str, name: str) -> str:
    """The traces endpoint: OTEL_EXPORTER_OTLP_ENDPOINT is a base URL, to which OTLP appends /v1/traces."""
    if not raw.startswith(("http://", "https://")):
        raise SettingsError(f"{name} must be an http:// or https:// URL (got {raw!r})")
    return raw.rstrip("/") + "/v1/traces" if name == "OTEL_EXPORTER_OTLP_ENDPOINT" else raw


class Variable(NamedTuple):
    names: tuple[str, ...]  # the first one set is read
    read: Reader = text
    empty_is_a_value: bool = False  # an empty variable is read (e.g. TRUSTED_PROXIES= for none), not a default


# Every setting once: its environment variable(s) and how it is read; its default is Settings' own.
VARIABLES: dict[str, Variable] = {
    "model_provider": Variable(("CHAT_MODEL_PROVIDER",), choice(*PROVIDERS)),
    "model_name": Variable(("CHAT_MODEL_NAME",)),
    "memory_backend": Variable(("CHAT_MEMORY_BACKEND",), choice(*MEMORY_BACKENDS)),
    "database_url": Variable(("DATABASE_URL",), database_url),
    "data_dir": Variable(("THREADLINE_DATA_DIR",), lambda raw, name: Path(raw)),
    "stream_mode": Variable(("CHAT_STREAM_MODE",), choice(*STREAM_MODES)),
    "system_prompt": Variable(("CHAT_SYSTEM_PROMPT",)),
    "max_model_calls": Variable(("CHAT_MAX_MODEL_CALLS",), number(int, 1, 50)),
    "google_api_key": Variable(("GOOGLE_API_KEY", "GEMINI_API_KEY")),
    "gemini_base_url": Variable(("GEMINI_BASE_URL",)),
    "openai_api_key": Variable(("OPENAI_API_KEY",)),
    "openai_base_url": Variable(("OPENAI_BASE_URL",)),
    "demo_token_delay_ms": Variable(("CHAT_DEMO_TOKEN_DELAY_MS",), number(float, 0.0, 10_000.0)),
    "client_id_secret": Variable(("THREADLINE_SECRET",)),
    "cors_origins": Variable(("CORS_ORIGINS",), origins),
    "rate_limit": Variable(("CHAT_RATE_LIMIT",), rate),
    "chat_stream_rate_limit": Variable(("CHAT_STREAM_RATE_LIMIT",), rate),
    "api_rate_limit": Variable(("API_RATE_LIMIT",), rate),
    "rate_limit_storage": Variable(("RATE_LIMIT_STORAGE",), rate_storage),
    "trusted_proxies": Variable(("TRUSTED_PROXIES",), networks, empty_is_a_value=True),
    "first_token_timeout": Variable(("CHAT_FIRST_TOKEN_TIMEOUT",), number(float, 0.1, 3600.0)),
    "idle_timeout": Variable(("CHAT_IDLE_TIMEOUT",), number(float, 0.1, 3600.0)),
    "total_timeout": Variable(("CHAT_TOTAL_TIMEOUT",), number(float, 0.1, 86400.0)),
    "host": Variable(("THREADLINE_HOST",)),
    "port": Variable(("THREADLINE_PORT",), number(int, 1, 65535)),
    "log_level": Variable(("LOG_LEVEL",), choice("DEBUG", "INFO", "WARNING", "ERROR", upper=True)),
    "log_format": Variable(("LOG_FORMAT",), choice("text", "json")),
    "frontend_dir": Variable(("THREADLINE_FRONTEND_DIR",), lambda raw, name: Path(raw)),
    "profiles": Variable(("CHAT_PROFILES",)),  # read with the whole environment, for its ${NAME} references
    "mcp_servers": Variable(("MCP_SERVERS",)),  # read with the whole environment, for its ${NAME} references
    "mcp_tool_timeout": Variable(("MCP_TOOL_TIMEOUT",), number(float, 0.1, 3600.0)),
    "mcp_secret": Variable(("MCP_JWT_SECRET",), mcp_secret),
    "max_turns_per_conversation": Variable(("CHAT_MAX_TURNS",), number(int, 1, 1_000_000)),
    "max_conversations_per_visitor": Variable(("CHAT_MAX_CONVERSATIONS",), number(int, 1, 1_000_000)),
    "tool_output_preview": Variable(("CHAT_TOOL_OUTPUT_PREVIEW",), number(int, 1, 1_000_000)),
    "trace_retention_days": Variable(("CHAT_TRACE_RETENTION_DAYS",), number(float, 0.0, 36_500.0)),
    "resumable": Variable(("CHAT_RESUMABLE",), lambda raw, name: choice("true", "false")(raw.lower(), name) == "true"),
    "multitask_strategy": Variable(("CHAT_MULTITASK_STRATEGY",), choice("reject", "interrupt", "enqueue", "rollback")),
    "on_disconnect": Variable(("CHAT_ON_DISCONNECT",), choice("cancel", "continue")),
    "ab_profiles": Variable(("CHAT_AB_PROFILES",), lambda raw, name: tuple(part.strip() for part in raw.split(","))),
    "admin_token": Variable(("CHAT_ADMIN_TOKEN",)),
    "actions": Variable(
        ("CHAT_ACTIONS",), lambda raw, name: tuple(part.strip() for part in raw.split(",") if part.strip())
    ),
    "otlp_traces_endpoint": Variable(("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"), otlp),
    "langfuse_public_key": Variable(("LANGFUSE_PUBLIC_KEY",)),
    "langfuse_secret_key": Variable(("LANGFUSE_SECRET_KEY",)),
    "langfuse_host": Variable(("LANGFUSE_HOST", "LANGFUSE_BASE_URL")),
    "max_connections": Variable(("THREADLINE_MAX_CONNECTIONS",), number(int, 1, 1_000_000)),
    "header_timeout": Variable(("THREADLINE_HEADER_TIMEOUT",), number(float, 0.1, 3600.0)),
    "shutdown_grace": Variable(("THREADLINE_SHUTDOWN_GRACE",), number(float, 0.0, 3600.0)),
    "body_timeout": Variable(("THREADLINE_BODY_TIMEOUT",), number(float, 0.1, 3600.0)),
}


def _read(env: Mapping[str, str], field: str, variable: Variable) -> Any:
    for name in variable.names:
        raw = env.get(name)
        if raw is not None and (raw.strip() or variable.empty_is_a_value):
            return variable.read(raw.strip(), name)
    return getattr(DEFAULTS, field)


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Build Settings from environment variables; raise SettingsError on the first bad one."""
    env = os.environ if env is None else env
    values = {field: _read(env, field, variable) for field, variable in VARIABLES.items()}
    provider = values["model_provider"]
    if not env.get("CHAT_MODEL_NAME", "").strip():
        values["model_name"] = DEFAULT_MODEL_NAMES[provider]
    values["profiles"] = ()
    if env.get("CHAT_PROFILES", "").strip():
        try:
            values["profiles"] = parse_profiles(env["CHAT_PROFILES"], env)
        except ProfileError as error:
            raise SettingsError(str(error)) from None
    if env.get("MCP_SERVERS", "").strip():
        try:
            values["mcp_servers"] = parse_servers(env["MCP_SERVERS"].strip(), env)
        except McpConfigError as error:
            raise SettingsError(str(error)) from None
    if bool(values["langfuse_public_key"]) != bool(values["langfuse_secret_key"]):
        raise SettingsError(
            "LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY are needed together to send traces to Langfuse"
        )
    if values["ab_profiles"]:
        known = [profile.id for profile in values["profiles"]]
        pair = values["ab_profiles"]
        if len(pair) != 2 or pair[0] == pair[1] or not set(pair) <= set(known):
            raise SettingsError(
                f"CHAT_AB_PROFILES must name two different profiles of CHAT_PROFILES, like 'a,b' "
                f"(profiles: {', '.join(known) or 'none'})"
            )
    if values["profiles"]:
        return Settings(**values)  # the profiles name their own providers and keys
    if provider == "gemini" and not values["google_api_key"]:
        raise SettingsError(
            "GOOGLE_API_KEY is required when CHAT_MODEL_PROVIDER=gemini "
            "(or set CHAT_MODEL_PROVIDER to one of openai, demo)"
        )
    if provider == "openai" and not (values["openai_api_key"] or values["openai_base_url"]):
        raise SettingsError("OPENAI_API_KEY or OPENAI_BASE_URL is required when CHAT_MODEL_PROVIDER=openai")
    return Settings(**values)
