"""Settings read once from the environment and validated, so a typo stops start-up with one clear line.

Each setting is declared once, as a field of `Settings`: its type (a `Literal` for a closed set), its
default, its bounds and its environment variable with a line of help, in `Annotated[…, env(…)]`. The
reader, the errors and the configuration reference in the docs (`reference_rows`) all come from there.
The two settings that are documents of their own are parsed beside it: `profiles` (CHAT_PROFILES) and
`mcp_servers` (MCP_SERVERS). `SECTIONS` groups the settings by concern, as the configuration reference
shows them; a service is handed its section struct (`answers`, `agents`, `models`: what a profile's model
falls back on, `storage`, `files`, `limits`, and for the HTTP routes `auth` and `routes`), not the whole `Settings`.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import importlib.util
import ipaddress
import os
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Annotated, Any, Literal, Self

import msgspec

from threadline.settings.mcp_servers import DEFAULT_SERVERS, McpConfigError, McpServerConfig, parse_servers
from threadline.settings.profiles import Profile, ProfileError, parse_profiles

Provider = Literal["gemini", "openai", "demo"]
MemoryBackend = Literal["postgres", "memory"]
StreamMode = Literal["messages", "events"]
MultitaskStrategy = Literal["reject", "interrupt", "enqueue", "rollback"]
OnDisconnect = Literal["cancel", "continue"]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]
LogFormat = Literal["text", "json"]

# Seed 000 named gemini-1.5-flash, which Google has retired: a real key with it fails.
DEFAULT_MODEL_NAMES = {"gemini": "gemini-2.5-flash", "openai": "gpt-4o-mini", "demo": "demo"}
# In an installed wheel (`tasks.py wheel` puts the page there), found as the package's data.
PACKAGED_PAGE = Path(str(importlib.resources.files("threadline") / "page"))
CHECKOUT_PAGE = Path(__file__).resolve().parents[3] / "frontend" / "dist"  # built by `tasks.py serve`
DEFAULT_FRONTEND_DIR = PACKAGED_PAGE if (PACKAGED_PAGE / "index.html").exists() else CHECKOUT_PAGE
DEFAULT_TRUSTED_PROXIES = ("127.0.0.1/32", "::1/128")
DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant. Use the tools you have when they help, and answer concisely."


class SettingsError(ValueError):
    """A setting has a bad value; the message is one line naming the variable and what it accepts."""


# How a variable's text becomes a value: the stripped text (never empty: an empty or missing variable
# means the default) and the variable's name for the error message.
Reader = Callable[[str, str], Any]


@dataclass(frozen=True)
class Env:
    """Where a setting comes from: its variables (the first one set is read) and what the docs say of it."""

    names: tuple[str, ...]
    help: str
    read: Reader | None = None  # None: read by the field's type
    default: str | None = None  # the docs' words for the default, when its value alone says too little
    empty_is_a_value: bool = False  # an empty variable is read (TRUSTED_PROXIES= for none), not a default


def env(*names: str, help: str, read: Reader | None = None, default: str | None = None, empty: bool = False) -> Env:
    return Env(names, help, read, default, empty)


def choice(*allowed: str, upper: bool = False) -> Reader:
    def read(raw: str, name: str) -> str:
        value = raw.upper() if upper else raw
        if value not in allowed:
            raise SettingsError(f"{name} must be one of {', '.join(allowed)} (got {raw!r})")
        return value

    return read


def number(kind: type[int] | type[float], minimum: float, maximum: float, above: float | None = None) -> Reader:
    """A number from `minimum` to `maximum`; with `above`, one greater than it (a bound the value may not reach)."""

    def read(raw: str, name: str) -> int | float:
        try:
            value = kind(raw)
        except ValueError:
            value = None
        if value is None or not minimum <= value <= maximum:
            raise SettingsError(f"{name} must be a {kind.__name__} from {minimum} to {maximum} (got {raw!r})")
        if above is not None and value <= above:
            raise SettingsError(f"{name} must be more than {above} (got {raw!r})")
        return value

    return read


def boolean(raw: str, name: str) -> bool:
    value: str = choice("true", "false")(raw.lower(), name)
    return value == "true"


def comma_list(raw: str, name: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def json_strings(raw: str, name: str) -> tuple[str, ...]:
    try:
        value = msgspec.json.decode(raw, type=tuple[str, ...])
    except msgspec.DecodeError:
        raise SettingsError(f'{name} must be a JSON array of strings, e.g. ["Plan a trip", "Explain DNS"]') from None
    return tuple(item.strip() for item in value if item.strip())


def json_object(raw: str, name: str) -> dict[str, Any]:
    try:
        return msgspec.json.decode(raw, type=dict[str, Any])
    except msgspec.DecodeError:
        raise SettingsError(f'{name} must be a JSON object, e.g. {{"max_search_results": 5}}') from None


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


def database_url(raw: str, name: str) -> str:
    if not raw.startswith(("postgresql://", "postgres://")):
        raise SettingsError(f"{name} must start with postgresql:// (got {raw.split(':')[0]!r}...)")
    return raw


def schema_name(raw: str, name: str) -> str:
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", raw):
        raise SettingsError(f"{name} must be a PostgreSQL schema name: lower-case letters, digits and _ (got {raw!r})")
    return raw


def origins(raw: str, name: str) -> tuple[str, ...]:
    values = comma_list(raw, name)
    for origin in values:
        if not origin.startswith(("http://", "https://")) or origin.endswith("/") or origin.count("/") > 2:
            raise SettingsError(
                f"{name} must be a comma-separated list of origins like http://localhost:3000 (got {origin!r})"
            )
    return values


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


def s3_url(raw: str, name: str) -> str:
    if not raw.startswith("s3://") or not raw.removeprefix("s3://").split("/")[0]:
        raise SettingsError(f"{name} must look like s3://bucket or s3://bucket/prefix (got {raw!r})")
    return raw.rstrip("/")


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


def https_url(raw: str, name: str) -> str:
    """An identity provider's address: https, or http for one on this machine (a local stand-in)."""
    local = raw.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]"))
    if not (raw.startswith("https://") or local):
        raise SettingsError(f"{name} must be an https:// URL (http:// only on this machine) (got {raw!r})")
    return raw  # as the provider writes it: a token's `iss` must match it exactly, trailing slash and all


def mcp_secret(raw: str, name: str) -> str:
    if len(raw.encode()) < 32:
        raise SettingsError(f"{name} must be at least 32 bytes long (shorter HS256 keys can be guessed)")
    return raw


def retention_days(raw: str, name: str) -> float:
    """`0` (keep), or at least an hour: a tiny value (`1e-9`) deletes conversations as soon as the hourly check
    runs, which nobody means."""
    value = float(number(float, 0.0, 36_500.0)(raw, name))
    if 0 < value < 1 / 24:
        raise SettingsError(f"{name} must be 0 (keep) or at least 0.042 (an hour) (got {raw!r})")
    return value


def signing_secret(raw: str, name: str) -> str:
    """The key that signs visitors' ids: one anyone could guess would let anyone be any visitor."""
    if len(raw.encode()) < 32:
        raise SettingsError(f"{name} must be at least 32 bytes long, e.g. the output of `openssl rand -hex 32`")
    return raw


def otlp(raw: str, name: str) -> str:
    """The traces endpoint: OTEL_EXPORTER_OTLP_ENDPOINT is a base URL, to which OTLP appends /v1/traces."""
    if not raw.startswith(("http://", "https://")):
        raise SettingsError(f"{name} must be an http:// or https:// URL (got {raw!r})")
    return raw.rstrip("/") + "/v1/traces" if name == "OTEL_EXPORTER_OTLP_ENDPOINT" else raw


def _unread(raw: str, name: str) -> Any:
    raise AssertionError(f"{name} is read with the whole environment")  # pragma: no cover


def seconds(maximum: float = 3600.0, minimum: float = 0.1) -> Any:
    return msgspec.Meta(ge=minimum, le=maximum)


MOST_FILE_BYTES = 30 * 1024 * 1024  # the most FILE_MAX_BYTES and FILE_MAX_MESSAGE_BYTES may be: bounds a request's body


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    model_provider: Annotated[
        Provider,
        env(
            "CHAT_MODEL_PROVIDER",
            help="`gemini`, `openai` (any OpenAI-compatible server) or `demo` (offline, scripted; for trying it "
            "out and tests)",
            default="the provider whose key is set (`GOOGLE_API_KEY`: `gemini`; `OPENAI_API_KEY` or "
            "`OPENAI_BASE_URL`: `openai`), else `demo`",
        ),
    ] = "gemini"
    model_name: Annotated[
        str,
        env(
            "CHAT_MODEL_NAME",
            help="the provider's model name",
            default="`gemini-2.5-flash` (seed 000 names `gemini-1.5-flash`, which Google has retired); "
            "`gpt-4o-mini` for `openai`",
        ),
    ] = DEFAULT_MODEL_NAMES["gemini"]
    profiles: Annotated[
        tuple[Profile, ...],
        env(
            "CHAT_PROFILES",
            help="the model profiles a conversation may use: JSON, or a JSON/TOML file's path (see "
            "[Model profiles](../guides/profiles.md)); when set, the `CHAT_MODEL_*` variables are not used",
            read=_unread,
        ),
    ] = ()
    ab_profiles: Annotated[
        tuple[str, ...],
        env(
            "CHAT_AB_PROFILES",
            help="two profile ids, `a,b`: every new message is answered by both, side by side, for a vote (see "
            "[A/B comparisons](../guides/comparisons.md))",
            read=lambda raw, name: tuple(part.strip() for part in raw.split(",")),
        ),
    ] = ()
    actions: Annotated[
        tuple[str, ...],
        env(
            "CHAT_ACTIONS",
            help="the application's server actions, `module:attribute,…` (see "
            "[Suggested replies and actions](../guides/suggestions.md))",
        ),
    ] = ()
    graph: Annotated[
        str | None,
        env(
            "THREADLINE_GRAPH",
            help="your own LangGraph agent, `path/to/file.py:name` or `package.module:name`: a `StateGraph`, a "
            "compiled graph, or a factory given an `AgentContext`; or a `langgraph.json` (`path/langgraph.json[:id]`) "
            "(see [Your own agent](../guides/agents.md)); unset, the built-in agent answers",
        ),
    ] = None
    graph_context: Annotated[
        dict[str, Any],
        env(
            "THREADLINE_GRAPH_CONTEXT",
            help="values of your graph's own `context_schema`, a JSON object, given to every run (see "
            "[Your own agent](../guides/agents.md#its-own-context))",
            read=json_object,
            default="none",
        ),
    ] = {}
    request_context: Annotated[
        tuple[str, ...],
        env(
            "THREADLINE_REQUEST_CONTEXT",
            help="the keys of your graph's context a chat request may set (its body's `context`), comma-separated; "
            "never `user_id`, which is always who asks",
            read=comma_list,
            default="none",
        ),
    ] = ()
    admin_token: Annotated[
        str | None,
        env(
            "CHAT_ADMIN_TOKEN",
            help="the bearer token operators send to read the A/B results (`GET /api/comparisons`) and, unless "
            "`METRICS_PUBLIC=true`, `/metrics`; unset (and no `AUTH_ADMIN_ROLE`), nobody reads the results and "
            "`/metrics` is open",
        ),
    ] = None
    google_api_key: Annotated[str | None, env("GOOGLE_API_KEY", "GEMINI_API_KEY", help="required for `gemini`")] = None
    gemini_base_url: Annotated[
        str | None, env("GEMINI_BASE_URL", help="another Gemini API endpoint", default="Google's endpoint")
    ] = None
    openai_api_key: Annotated[str | None, env("OPENAI_API_KEY", help="key for `openai`")] = None
    openai_base_url: Annotated[
        str | None,
        env(
            "OPENAI_BASE_URL",
            help="any OpenAI-compatible server, e.g. `http://127.0.0.1:11434/v1` for Ollama, vLLM, llama.cpp's "
            "server, OpenRouter; any address but OpenAI's (or Azure OpenAI's) is read with the reasoning-aware "
            "client, so a reasoning model's thinking streams as reasoning",
            default="OpenAI's endpoint",
        ),
    ] = None
    memory_backend: Annotated[
        MemoryBackend, env("CHAT_MEMORY_BACKEND", help="`postgres` or `memory` (lost when the server stops)")
    ] = "postgres"
    database_url: Annotated[
        str | None,
        env(
            "DATABASE_URL",
            help="`postgresql://…`; without it, `postgres` starts an embedded PostgreSQL (the `pgserver` wheel) "
            "in the data directory",
            read=database_url,
        ),
    ] = None
    database_schema: Annotated[
        str,
        env(
            "THREADLINE_DATABASE_SCHEMA",
            help="the PostgreSQL schema threadline's tables live in, apart from a host app's own tables; a database "
            "set up by a version before it keeps its tables in `public` (`threadline check` says which)",
            read=schema_name,
        ),
    ] = "threadline"
    data_dir: Annotated[
        Path,
        env("THREADLINE_DATA_DIR", help="where the embedded PostgreSQL keeps its files", default="`./.threadline`"),
    ] = Path(".threadline")
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
    generated_titles: Annotated[
        bool,
        env(
            "CHAT_GENERATED_TITLES",
            help="after a conversation's first answer, its model writes a short title for it (one small call; see "
            "[Conversations](../guides/conversations.md#titles)); `false` keeps the first message's words",
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
    shutdown_grace: Annotated[
        float,
        seconds(minimum=0.0),
        env(
            "THREADLINE_SHUTDOWN_GRACE",
            help="seconds running answers get to finish after SIGTERM, before they are stopped and saved",
        ),
    ] = 30.0
    starters: Annotated[
        tuple[str, ...],
        env(
            "CHAT_STARTERS",
            help="the prompts the page offers in an empty conversation, a JSON array of strings (a profile's "
            "`starters` win for it); else the demo model's commands with the demo model, general ones otherwise",
            read=json_strings,
            default="by model",
        ),
    ] = ()
    system_prompt: Annotated[
        str,
        env(
            "CHAT_SYSTEM_PROMPT",
            help="the system prompt, applied to every model call",
            default="a short helpful-assistant prompt",
        ),
    ] = DEFAULT_SYSTEM_PROMPT
    max_model_calls: Annotated[
        int,
        msgspec.Meta(ge=1, le=50),
        env(
            "CHAT_MAX_MODEL_CALLS",
            help="model calls per answer before the server stops the tool loop with a clear final message",
        ),
    ] = 5
    demo_token_delay_ms: Annotated[
        float,
        msgspec.Meta(ge=0.0, le=10_000.0),
        env("CHAT_DEMO_TOKEN_DELAY_MS", help="the demo model's pause between tokens"),
    ] = 15.0
    client_id_secret: Annotated[
        str | None,
        env(
            "THREADLINE_SECRET",
            help="the key that signs visitors' anonymous ids, at least 32 bytes; set the same value on every "
            "instance behind one load balancer",
            read=signing_secret,
            default="generated once into `<data dir>/client-id-secret`",
        ),
    ] = None
    auth_issuer: Annotated[
        str | None,
        env(
            "AUTH_ISSUER",
            help="your OpenID Connect provider's issuer URL: every endpoint then accepts `Authorization: Bearer "
            "<JWT>` from it, checked against its published keys (see [Accounts](../guides/accounts.md))",
            read=https_url,
        ),
    ] = None
    auth_audience: Annotated[
        str | None,
        env("AUTH_AUDIENCE", help="the audience (`aud`) tokens must name: your API's identifier at the provider"),
    ] = None
    auth_jwks_url: Annotated[
        str | None,
        env(
            "AUTH_JWKS_URL",
            help="where the provider publishes its keys, when that is not in its discovery document",
            default="the discovery document's `jwks_uri`",
            read=https_url,
        ),
    ] = None
    auth_client_id: Annotated[
        str | None,
        env(
            "AUTH_CLIENT_ID",
            help="with `AUTH_ISSUER`: the chat page's client id at the provider (a public client, authorization "
            "code with PKCE); the page then offers to sign in",
            default="none: the page stays anonymous",
        ),
    ] = None
    auth_scopes: Annotated[
        str,
        env(
            "AUTH_SCOPES",
            help="the scopes the page asks for; `offline_access` brings the refresh token it renews sign-ins with",
        ),
    ] = "openid profile email offline_access"
    auth_roles_claim: Annotated[
        str,
        env(
            "AUTH_ROLES_CLAIM",
            help="the token claim that lists the user's roles: a name (`roles`, a namespaced "
            "`https://example.com/roles`) or a dotted path (Keycloak's `realm_access.roles`)",
        ),
    ] = "roles"
    auth_admin_role: Annotated[
        str | None,
        env(
            "AUTH_ADMIN_ROLE",
            help="the role of operators: they read the A/B results and, unless `METRICS_PUBLIC=true`, `/metrics` "
            "(`CHAT_ADMIN_TOKEN` works too)",
        ),
    ] = None
    metrics_public: Annotated[
        bool,
        env(
            "METRICS_PUBLIC",
            help="with `CHAT_ADMIN_TOKEN` or `AUTH_ADMIN_ROLE`: `true` keeps `/metrics` open to any scraper",
        ),
    ] = False
    auth_anonymous: Annotated[
        Literal["allow", "deny"],
        env(
            "AUTH_ANONYMOUS",
            help="with `AUTH_ISSUER`: `allow` lets visitors without a token chat anonymously, `deny` answers them 401",
        ),
    ] = "allow"
    cors_origins: Annotated[
        tuple[str, ...],
        env(
            "CORS_ORIGINS",
            help="comma-separated origins allowed to call the API with credentials, e.g. `http://localhost:3000`",
            read=origins,
            default="empty: same origin only",
        ),
    ] = ()
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
    answers_per_visitor: Annotated[
        int,
        msgspec.Meta(ge=1, le=100),
        env(
            "CHAT_ANSWERS_PER_VISITOR",
            help="answers one visitor or user may have running at once, each in its own conversation (a "
            "conversation runs one at a time; seed 004's route one per visitor, as its document says)",
        ),
    ] = 3
    max_turns_per_conversation: Annotated[
        int,
        msgspec.Meta(ge=1, le=1_000_000),
        env(
            "CHAT_MAX_TURNS",
            help="messages per conversation, edits and regenerations included "
            "(see [Storage](../operations/storage.md))",
        ),
    ] = 500
    max_conversations_per_visitor: Annotated[
        int, msgspec.Meta(ge=1, le=1_000_000), env("CHAT_MAX_CONVERSATIONS", help="conversations per visitor")
    ] = 500
    file_types: Annotated[
        tuple[str, ...],
        env(
            "FILE_TYPES",
            help="the media types a message may attach, comma-separated (see [Attachments](../guides/attachments.md))",
            read=comma_list,
        ),
    ] = (
        "image/png",
        "image/jpeg",
        "image/webp",
        "image/gif",
        "application/pdf",
        "text/plain",
        "text/markdown",
        "text/csv",
        "application/json",
    )
    file_max_bytes: Annotated[
        int, msgspec.Meta(ge=1, le=MOST_FILE_BYTES), env("FILE_MAX_BYTES", help="bytes per attached file")
    ] = 10 * 1024 * 1024
    file_max_count: Annotated[
        int, msgspec.Meta(ge=0, le=100), env("FILE_MAX_COUNT", help="files per message (0: no attachments)")
    ] = 4
    file_max_message_bytes: Annotated[
        int,
        msgspec.Meta(ge=1, le=MOST_FILE_BYTES),
        env("FILE_MAX_MESSAGE_BYTES", help="bytes of all files in one message"),
    ] = 20 * 1024 * 1024
    file_bytes_per_day: Annotated[
        int,
        msgspec.Meta(ge=1, le=1 << 50),
        env(
            "FILE_BYTES_PER_DAY",
            help="bytes of new files one client address may send in a day (a signed-in user: per user), however "
            "many anonymous ids it makes",
        ),
    ] = 1024 * 1024 * 1024
    file_prompt_bytes: Annotated[
        int,
        msgspec.Meta(ge=0, le=1 << 40),
        env(
            "FILE_PROMPT_BYTES",
            help="bytes of attached files one model call is given, the newest first; older files are named, "
            "not sent again",
        ),
    ] = 20 * 1024 * 1024
    file_check_seconds: Annotated[
        float,
        msgspec.Meta(gt=0, le=120),
        env(
            "FILE_CHECK_SECONDS",
            help="seconds the check of one file may take (a PDF is opened in a process of its own, stopped then); "
            "a file that takes longer is refused",
        ),
    ] = 5.0
    file_quota_bytes: Annotated[
        int,
        msgspec.Meta(ge=1, le=1 << 50),
        env("FILE_QUOTA_BYTES", help="bytes of files each visitor or user may keep"),
    ] = 500 * 1024 * 1024
    file_store_url: Annotated[
        str | None,
        env(
            "FILE_STORE_URL",
            help="`s3://bucket/prefix`: attached files' bytes go to an S3-compatible object store (credentials and "
            "`AWS_ENDPOINT_URL` as the AWS SDK reads them); the rest stays in the database",
            read=s3_url,
            default="none: in PostgreSQL",
        ),
    ] = None
    header_timeout: Annotated[
        float, seconds(), env("THREADLINE_HEADER_TIMEOUT", help="seconds a client may take to send a request's headers")
    ] = 10.0
    body_timeout: Annotated[
        float, seconds(), env("THREADLINE_BODY_TIMEOUT", help="seconds a client may take to send a request's body")
    ] = 30.0
    max_connections: Annotated[
        int,
        msgspec.Meta(ge=1, le=1_000_000),
        env(
            "THREADLINE_MAX_CONNECTIONS",
            help="requests at work before new ones get `503` (idle kept-alive connections are closed to make room)",
        ),
    ] = 1000
    rate_limit_storage: Annotated[
        str,
        env(
            "RATE_LIMIT_STORAGE",
            help="or `redis://host:6379/0` to share the limits between processes",
            read=rate_storage,
        ),
    ] = "memory://"
    trusted_proxies: Annotated[
        tuple[str, ...],
        env(
            "TRUSTED_PROXIES",
            help="proxies whose `X-Forwarded-For` is believed (addresses or CIDR ranges; empty: none)",
            read=networks,
            empty=True,
        ),
    ] = DEFAULT_TRUSTED_PROXIES
    first_token_timeout: Annotated[
        float, seconds(), env("CHAT_FIRST_TOKEN_TIMEOUT", help="seconds an answer may take to its first token")
    ] = 10.0
    idle_timeout: Annotated[
        float, seconds(), env("CHAT_IDLE_TIMEOUT", help="seconds an answer may go without an event")
    ] = 30.0
    total_timeout: Annotated[
        float, seconds(86_400.0), env("CHAT_TOTAL_TIMEOUT", help="seconds an answer may take in all")
    ] = 120.0
    agent_timeouts: Annotated[
        dict[str, AgentLimits],
        env(
            "THREADLINE_AGENT_TIMEOUTS",
            help="an agent's own limits, a JSON object by agent id: `first_token`, `idle`, `total` in seconds (an "
            "agent that researches for minutes before it speaks, say); the others keep the three above",
            read=agent_limits,
            default="none",
        ),
    ] = {}
    host: Annotated[str, env("THREADLINE_HOST", help="the address the server listens on")] = "127.0.0.1"
    port: Annotated[int, msgspec.Meta(ge=1, le=65535), env("THREADLINE_PORT", help="the port it listens on")] = 8000
    log_level: Annotated[
        LogLevel,
        env(
            "LOG_LEVEL",
            help="`DEBUG`, `INFO`, `WARNING` or `ERROR`",
            read=choice(*typing.get_args(LogLevel), upper=True),
        ),
    ] = "INFO"
    log_format: Annotated[
        LogFormat,
        env(
            "LOG_FORMAT",
            help="`text` for people, or `json`: one object per line with the context fields (`conversation_id`, "
            "`error_code`, the exception)",
        ),
    ] = "text"
    frontend_dir: Annotated[
        Path,
        env(
            "THREADLINE_FRONTEND_DIR",
            help="where the built chat page is; without one, the API runs alone",
            default="the page inside the installed package, else `frontend/dist` of this checkout",
        ),
    ] = DEFAULT_FRONTEND_DIR
    mcp_servers: Annotated[
        tuple[McpServerConfig, ...],
        env(
            "MCP_SERVERS",
            help="the MCP servers whose tools the model may call: JSON or a JSON file's path (see "
            "[Tools](../guides/tools.md)); `[]` for none",
            read=_unread,
            default="the built-in server",
        ),
    ] = DEFAULT_SERVERS
    mcp_tool_timeout: Annotated[
        float,
        seconds(),
        env(
            "MCP_TOOL_TIMEOUT",
            help="seconds a tool call may take before it is cancelled and the model is told it timed out",
        ),
    ] = 10.0
    mcp_secret: Annotated[
        str | None,
        env(
            "MCP_JWT_SECRET",
            help="the HS256 key (32+ bytes) of the built-in MCP server's tokens",
            read=mcp_secret,
            default="derived from `THREADLINE_SECRET`",
        ),
    ] = None
    tool_output_preview: Annotated[
        int,
        msgspec.Meta(ge=1, le=1_000_000),
        env("CHAT_TOOL_OUTPUT_PREVIEW", help="characters of a tool's result in seed 002's `tool_output` event"),
    ] = 2_000
    trace_retention_days: Annotated[
        float,
        msgspec.Meta(ge=0.0, le=36_500.0),
        env(
            "CHAT_TRACE_RETENTION_DAYS",
            help="days an answer's trace document is kept (traces also go with their conversation); `0` keeps "
            "none (still served while the answer runs, logged, counted and exported)",
        ),
    ] = 30.0
    conversation_retention_days: Annotated[
        float,
        msgspec.Meta(ge=0.0, le=36_500.0),
        env(
            "CHAT_CONVERSATION_RETENTION_DAYS",
            help="a conversation with no new message for this many days is deleted, with its traces, ratings, "
            "links and the files no other conversation uses (checked hourly); `0` keeps conversations for good",
            read=retention_days,
        ),
    ] = 0.0
    anonymous_retention_days: Annotated[
        float,
        msgspec.Meta(ge=0.0, le=36_500.0),
        env(
            "CHAT_ANONYMOUS_RETENTION_DAYS",
            help="the same for anonymous visitors' conversations only (signed-in users' keep "
            "`CHAT_CONVERSATION_RETENTION_DAYS`); `0`: as `CHAT_CONVERSATION_RETENTION_DAYS` says",
            read=retention_days,
        ),
    ] = 0.0
    otlp_traces_endpoint: Annotated[
        str | None,
        env(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            help="send OpenTelemetry spans over OTLP/HTTP there (`/v1/traces` is added to "
            "`OTEL_EXPORTER_OTLP_ENDPOINT`); off when unset (see [Observability](../operations/observability.md))",
            read=otlp,
        ),
    ] = None
    langfuse_public_key: Annotated[
        str | None, env("LANGFUSE_PUBLIC_KEY", help="with `LANGFUSE_SECRET_KEY`: each answer is a Langfuse trace")
    ] = None
    langfuse_secret_key: Annotated[
        str | None, env("LANGFUSE_SECRET_KEY", help="with `LANGFUSE_PUBLIC_KEY`: each answer is a Langfuse trace")
    ] = None
    langfuse_host: Annotated[str, env("LANGFUSE_HOST", "LANGFUSE_BASE_URL", help="your Langfuse server")] = (
        "https://cloud.langfuse.com"
    )


DEFAULTS = Settings()


def _reader_of(annotation: Any, meta: list[msgspec.Meta]) -> Reader:
    """How a field's variable is read when the field names no reader: by its type and its bounds."""
    hint = annotation
    if typing.get_origin(hint) is typing.Union:  # `X | None`: read as X
        hint = next(arg for arg in typing.get_args(hint) if arg is not type(None))
    if typing.get_origin(hint) is Literal:
        return choice(*typing.get_args(hint))
    if hint in (int, float):
        bounds = meta[0] if meta else msgspec.Meta()
        lowest = bounds.ge if bounds.ge is not None else -1e18
        return number(hint, lowest, bounds.le if bounds.le is not None else 1e18, bounds.gt)
    if hint is bool:
        return boolean
    if hint is Path:
        return lambda raw, name: Path(raw)
    if typing.get_origin(hint) is tuple:
        return comma_list
    return lambda raw, name: raw


@dataclass(frozen=True)
class Variable:
    field: str
    env: Env
    read: Reader
    annotation: Any


def _variables() -> dict[str, Variable]:
    hints = typing.get_type_hints(Settings, include_extras=True)
    variables = {}
    for field, hint in hints.items():
        annotation, *extras = typing.get_args(hint)
        [source] = [extra for extra in extras if isinstance(extra, Env)]
        meta = [extra for extra in extras if isinstance(extra, msgspec.Meta)]
        source = replace(source, names=prefixed(*source.names))
        variables[field] = Variable(field, source, source.read or _reader_of(annotation, meta), annotation)
    return variables


PREFIX = "THREADLINE_"


def prefixed(*names: str) -> tuple[str, ...]:
    """Every setting is also THREADLINE_<NAME>, read first, so it never collides with a host app's own
    LOG_LEVEL or DATABASE_URL; the plain names stay as aliases."""
    return tuple(dict.fromkeys([*(name if name.startswith(PREFIX) else PREFIX + name for name in names), *names]))


def given(env_vars: Mapping[str, str], name: str) -> str:
    """The value of a setting's variable (`name` or its THREADLINE_ name), stripped; empty when unset."""
    return next((value.strip() for key in prefixed(name) if (value := env_vars.get(key, "")).strip()), "")


# Every setting once, as Settings declares it: its variable(s), how it is read, and its help.
VARIABLES = _variables()


def _read(env_vars: Mapping[str, str], variable: Variable) -> Any:
    for name in variable.env.names:
        raw = env_vars.get(name)
        if raw is not None and (raw.strip() or variable.env.empty_is_a_value):
            return variable.read(raw.strip(), name)
    return getattr(DEFAULTS, variable.field)


def _parsed(env_vars: Mapping[str, str], name: str, parse: Callable[[str, Mapping[str, str]], Any]) -> Any:
    try:
        return parse(given(env_vars, name), env_vars)
    except (ProfileError, McpConfigError) as error:
        raise SettingsError(str(error)) from None


# The variables a langgraph.json's `env` put into this process's environment (agent/langgraph_json.py): the agent's,
# never threadline's settings, also in the processes `serve --workers` and `--reload` start, which inherit them.
AGENT_ENV = "THREADLINE_AGENT_ENV_NAMES"


def load_settings(env_vars: Mapping[str, str] | None = None, *, own_names_only: bool = False) -> Settings:
    """Build Settings from environment variables (but those an agent's langgraph.json set); raise SettingsError on the
    first bad one. `own_names_only`: only the THREADLINE_ names, in a host app whose DATABASE_URL or LOG_LEVEL are
    its own."""
    env_vars = os.environ if env_vars is None else env_vars
    if own_names_only:
        env_vars = {name: value for name, value in env_vars.items() if name.startswith(PREFIX)}
    if agents := set(env_vars.get(AGENT_ENV, "").split(",")) - {""}:
        env_vars = {name: value for name, value in env_vars.items() if name not in agents}
    values = {field: _read(env_vars, variable) for field, variable in VARIABLES.items() if variable.read is not _unread}
    if not given(env_vars, "CHAT_MODEL_PROVIDER"):
        values["model_provider"] = provider_by_key(values)
    provider = values["model_provider"]
    if not given(env_vars, "CHAT_MODEL_NAME"):
        values["model_name"] = DEFAULT_MODEL_NAMES[provider]
    if given(env_vars, "CHAT_PROFILES"):
        values["profiles"] = _parsed(env_vars, "CHAT_PROFILES", parse_profiles)
    if given(env_vars, "MCP_SERVERS"):
        values["mcp_servers"] = _parsed(env_vars, "MCP_SERVERS", parse_servers)
    _check_together(values)
    _check_extras(values)
    return Settings(**values)


def provider_by_key(values: Mapping[str, Any]) -> Provider:
    """Without CHAT_MODEL_PROVIDER: the provider whose key is set, else the offline demo model (`threadline serve`
    says so), so a first run needs no account anywhere."""
    if values["google_api_key"]:
        return "gemini"
    if values["openai_api_key"] or values["openai_base_url"]:
        return "openai"
    return "demo"


# The package extra that brings each provider's chat model (pip install 'threadline[<extra>]'), for
# CHAT_MODEL_PROVIDER and for the profiles' `provider`.
_GOOGLE = ("google", ("langchain_google_genai",))
_OPENAI = ("openai", ("langchain_openai", "langchain_deepseek"))
PROVIDER_EXTRAS = {
    "gemini": _GOOGLE,
    "google": _GOOGLE,
    "openai": _OPENAI,
    "openrouter": _OPENAI,
    "ollama": _OPENAI,
    "custom": _OPENAI,
    "anthropic": ("anthropic", ("langchain_anthropic",)),
}


def packages_of(extra: str) -> list[str]:
    """What an extra of the installed threadline brings, as its metadata lists it (`langchain-openai>=1.0`, …)."""
    try:
        requirements = importlib.metadata.requires("threadline") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    marker = f'extra == "{extra}"'
    return [line.split(";")[0].strip() for line in requirements if marker in line.replace("'", '"')]


def _installed(*modules: str) -> bool:
    return all(importlib.util.find_spec(module) is not None for module in modules)


def _check_extras(values: dict[str, Any]) -> None:
    """A configured feature whose package is not installed stops start-up naming the extra that brings it."""
    providers = {profile.provider for profile in values.get("profiles", ())} or {values["model_provider"]}
    needs = [
        (f"the {provider} provider", *PROVIDER_EXTRAS[provider])
        for provider in sorted(providers)
        if provider in PROVIDER_EXTRAS
    ]
    if values["otlp_traces_endpoint"]:
        needs.append(("OTEL_EXPORTER_OTLP_ENDPOINT", "otel", ("opentelemetry.sdk", "opentelemetry.exporter.otlp")))
    if values["langfuse_public_key"]:
        needs.append(("LANGFUSE_PUBLIC_KEY", "langfuse", ("langfuse",)))
    if values["rate_limit_storage"].startswith("redis"):
        needs.append(("RATE_LIMIT_STORAGE=redis://", "redis", ("redis",)))
    if values["memory_backend"] == "postgres" and not values["database_url"]:
        needs.append(("the embedded PostgreSQL (no DATABASE_URL)", "embedded", ("pgserver",)))
    if values["file_store_url"]:
        needs.append(("FILE_STORE_URL=s3://", "s3", ("boto3",)))
    for feature, extra, modules in needs:
        if not _installed(*modules):
            raise SettingsError(
                f"{feature} needs threadline's {extra} extra: install the wheel again with it, "
                f"pip install '<the threadline wheel>[{extra}]' (`python3 tasks.py wheel` builds it into dist/), "
                f"or pip install {' '.join(repr(package) for package in packages_of(extra)) or 'its packages'}"
            )


def _check_together(values: dict[str, Any]) -> None:
    """What no single variable can say wrong: settings that need each other."""
    if bool(values["langfuse_public_key"]) != bool(values["langfuse_secret_key"]):
        raise SettingsError(
            "LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY are needed together to send traces to Langfuse"
        )
    if "user_id" in values["request_context"]:
        raise SettingsError("THREADLINE_REQUEST_CONTEXT cannot list user_id: it is always the id of who asks")
    known = [profile.id for profile in values.get("profiles", ())]
    pair = values["ab_profiles"]
    if pair and (len(pair) != 2 or pair[0] == pair[1] or not set(pair) <= set(known)):
        raise SettingsError(
            f"CHAT_AB_PROFILES must name two different profiles of CHAT_PROFILES, like 'a,b' "
            f"(profiles: {', '.join(known) or 'none'})"
        )
    if known:
        return  # the profiles name their own providers and keys
    provider = values["model_provider"]
    if provider == "gemini" and not values["google_api_key"]:
        raise SettingsError(
            "GOOGLE_API_KEY is required when CHAT_MODEL_PROVIDER=gemini "
            "(or set CHAT_MODEL_PROVIDER to one of openai, demo)"
        )
    if provider == "openai" and not (values["openai_api_key"] or values["openai_base_url"]):
        raise SettingsError("OPENAI_API_KEY or OPENAI_BASE_URL is required when CHAT_MODEL_PROVIDER=openai")


# The settings by concern, in the configuration reference's order: every field of `Settings` in one section.
# A service is handed the section struct it needs (settings/answers.py, models.py, agents.py, storage.py).
SECTIONS: dict[str, tuple[str, ...]] = {
    "Models and profiles": (
        "model_provider",
        "model_name",
        "profiles",
        "google_api_key",
        "gemini_base_url",
        "openai_api_key",
        "openai_base_url",
        "demo_token_delay_ms",
    ),
    "Agents": (
        "graph",
        "graph_context",
        "request_context",
        "system_prompt",
        "max_model_calls",
        "actions",
        "starters",
    ),
    "Answers": (
        "stream_mode",
        "resumable",
        "on_disconnect",
        "multitask_strategy",
        "first_token_timeout",
        "agent_timeouts",
        "idle_timeout",
        "total_timeout",
        "answers_per_visitor",
        "generated_titles",
        "ab_profiles",
    ),
    "Storage": (
        "memory_backend",
        "database_url",
        "database_schema",
        "data_dir",
        "max_turns_per_conversation",
        "max_conversations_per_visitor",
        "conversation_retention_days",
        "anonymous_retention_days",
    ),
    "Files": (
        "file_types",
        "file_max_bytes",
        "file_max_count",
        "file_max_message_bytes",
        "file_bytes_per_day",
        "file_prompt_bytes",
        "file_check_seconds",
        "file_quota_bytes",
        "file_store_url",
    ),
    "Accounts and sign-in": (
        "client_id_secret",
        "auth_issuer",
        "auth_audience",
        "auth_jwks_url",
        "auth_client_id",
        "auth_scopes",
        "auth_roles_claim",
        "auth_admin_role",
        "auth_anonymous",
        "admin_token",
        "metrics_public",
    ),
    "Limits": (
        "rate_limit",
        "role_rate_limits",
        "chat_stream_rate_limit",
        "api_rate_limit",
        "rate_limit_storage",
        "max_connections",
        "header_timeout",
        "body_timeout",
    ),
    "MCP tools": ("mcp_servers", "mcp_tool_timeout", "mcp_secret", "tool_output_preview"),
    "Observability": (
        "trace_retention_days",
        "otlp_traces_endpoint",
        "langfuse_public_key",
        "langfuse_secret_key",
        "langfuse_host",
        "log_level",
        "log_format",
    ),
    "Server": ("host", "port", "frontend_dir", "cors_origins", "trusted_proxies", "shutdown_grace"),
}


@dataclass(frozen=True)
class Section:
    """A section struct a service is handed: each of its fields is the setting of the same name."""

    @classmethod
    def of(cls, settings: Settings) -> Self:
        return cls(**{field.name: getattr(settings, field.name) for field in fields(cls)})


def reference_rows(section: str) -> list[tuple[str, str, str]]:
    """One section of the configuration reference, a row per setting: its variable(s), its default and its help."""
    rows = []
    for variable in (VARIABLES[field] for field in SECTIONS[section]):
        names = " or ".join(f"`{name}`" for name in variable.env.names)
        default = getattr(DEFAULTS, variable.field)
        shown = variable.env.default or ("—" if default in (None, ()) else f"`{_plain(default)}`")
        rows.append((names, shown, variable.env.help))
    return rows


def _plain(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(str(item) for item in value)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
