"""The observability settings: how long traces are kept, where spans and traces are sent, and the log."""

from __future__ import annotations

import typing
from typing import Annotated, ClassVar, Literal

import msgspec

from threadline.settings.reading import Section, SettingsError, choice, env

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]
LogFormat = Literal["text", "json"]


def otlp(raw: str, name: str) -> str:
    """The traces endpoint: OTEL_EXPORTER_OTLP_ENDPOINT is a base URL, to which OTLP appends /v1/traces."""
    if not raw.startswith(("http://", "https://")):
        raise SettingsError(f"{name} must be an http:// or https:// URL (got {raw!r})")
    return raw.rstrip("/") + "/v1/traces" if name == "OTEL_EXPORTER_OTLP_ENDPOINT" else raw


class ObservabilitySettings(Section, frozen=True, kw_only=True):
    TITLE: ClassVar[str] = "Observability"

    trace_retention_days: Annotated[
        float,
        msgspec.Meta(ge=0.0, le=36_500.0),
        env(
            "CHAT_TRACE_RETENTION_DAYS",
            help="days an answer's trace document is kept (traces also go with their conversation); `0` keeps "
            "none (still served while the answer runs, logged, counted and exported)",
        ),
    ] = 30.0
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
