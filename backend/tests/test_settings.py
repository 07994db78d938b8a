"""Settings come from the environment once; a bad value stops start-up with one clear line."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from threadline.settings import SettingsError, load_settings, packages_of


def test_defaults_follow_the_seed():
    settings = load_settings({"GOOGLE_API_KEY": "k"})
    assert (settings.models.model_provider, settings.models.model_name) == ("gemini", "gemini-2.5-flash")
    assert settings.storage.memory_backend == "postgres"
    assert settings.answers.stream_mode == "messages"
    assert settings.agents.max_model_calls == 5


def test_every_setting_is_also_threadline_name_which_wins():
    """Inside a host app, THREADLINE_ names keep threadline's settings apart from the app's own."""
    host_app = {"LOG_LEVEL": "DEBUG", "DATABASE_URL": "postgresql://app/app", "CORS_ORIGINS": "http://app:1"}
    ours = {"THREADLINE_LOG_LEVEL": "WARNING", "THREADLINE_DATABASE_URL": "postgresql://db/threadline"}
    settings = load_settings(host_app | ours | {"THREADLINE_CHAT_MODEL_PROVIDER": "demo"})
    assert (settings.observability.log_level, settings.storage.database_url) == (
        "WARNING",
        "postgresql://db/threadline",
    )
    assert settings.server.cors_origins == ("http://app:1",), "an alias where no THREADLINE_ name is set"
    assert settings.models.model_provider == "demo"
    with pytest.raises(SettingsError, match="THREADLINE_CHAT_STREAM_MODE must be one of"):
        load_settings({"THREADLINE_CHAT_STREAM_MODE": "all"})


@pytest.mark.parametrize(
    ("env", "provider"),
    [({}, "demo"), ({"GOOGLE_API_KEY": "k"}, "gemini"), ({"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, "openai")],
)
def test_without_a_provider_named_the_key_that_is_set_chooses_it_else_the_demo_model(env, provider):
    assert load_settings(env).models.model_provider == provider


@pytest.mark.parametrize(
    "env, named",
    [
        ({"CHAT_MODEL_PROVIDER": "gpt"}, "CHAT_MODEL_PROVIDER must be one of gemini, openai, demo"),
        (
            {"CHAT_MODEL_PROVIDER": "demo", "CHAT_MEMORY_BACKEND": "redis"},
            "CHAT_MEMORY_BACKEND must be one of postgres, memory",
        ),
        (
            {"CHAT_MODEL_PROVIDER": "demo", "CHAT_STREAM_MODE": "all"},
            "CHAT_STREAM_MODE must be one of messages, events",
        ),
        ({"CHAT_MODEL_PROVIDER": "demo", "THREADLINE_PORT": "http"}, "THREADLINE_PORT must be a int"),
        ({"CHAT_MODEL_PROVIDER": "demo", "DATABASE_URL": "mysql://x"}, "DATABASE_URL must start with postgresql://"),
        ({"CHAT_MODEL_PROVIDER": "gemini"}, "GOOGLE_API_KEY is required when CHAT_MODEL_PROVIDER=gemini"),
        (
            {"CHAT_MODEL_PROVIDER": "demo", "LANGFUSE_PUBLIC_KEY": "pk-lf-1"},
            "LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY are needed together",
        ),
        (
            {"CHAT_MODEL_PROVIDER": "demo", "OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"},
            "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL",
        ),
    ],
)
def test_bad_values_name_the_variable_and_what_it_accepts(env, named):
    with pytest.raises(SettingsError, match=named):
        load_settings(env)


def test_the_otlp_endpoint_is_read_as_the_sdk_reads_it():
    """The base endpoint gets the traces path appended; the traces endpoint is used as it is, and wins."""
    base = {"CHAT_MODEL_PROVIDER": "demo", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"}
    assert load_settings(base).observability.otlp_traces_endpoint == "http://collector:4318/v1/traces"
    traces = base | {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector/otlp/traces"}
    assert load_settings(traces).observability.otlp_traces_endpoint == "https://collector/otlp/traces"
    assert load_settings({"CHAT_MODEL_PROVIDER": "demo"}).observability.otlp_traces_endpoint is None, "off unless set"


def test_the_server_refuses_to_start_with_one_line():
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CHAT_", "GOOGLE", "GEMINI"))}
    result = subprocess.run(
        [sys.executable, "-m", "threadline", "serve"],
        capture_output=True,
        text=True,
        env=env | {"CHAT_MODEL_PROVIDER": "demo", "CHAT_STREAM_MODE": "verbose"},
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr == "threadline: CHAT_STREAM_MODE must be one of messages, events (got 'verbose')\n"


@pytest.mark.parametrize(
    "env, module, extra",
    [
        (
            {"CHAT_MODEL_PROVIDER": "openai", "OPENAI_API_KEY": "k", "DATABASE_URL": "postgresql://x"},
            "langchain_openai",
            "openai",
        ),
        ({"CHAT_MODEL_PROVIDER": "demo"}, "pgserver", "embedded"),
        ({"CHAT_MODEL_PROVIDER": "demo", "RATE_LIMIT_STORAGE": "redis://127.0.0.1:6379/0"}, "redis", "redis"),
        ({"CHAT_MODEL_PROVIDER": "demo", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, "opentelemetry.sdk", "otel"),
    ],
)
def test_a_configured_feature_without_its_extra_names_the_extra(monkeypatch, env, module, extra):
    """What a plain install of the wheel lacks is said at start-up, not met mid-answer, in a command that works
    (no package index serves `threadline`: the wheel with the extra, or the extra's own packages)."""
    monkeypatch.setitem(sys.modules, module, None)  # Python's own mark for a module that cannot be imported
    with pytest.raises(SettingsError) as refused:
        load_settings(env)
    said = str(refused.value)
    assert f"needs threadline's {extra} extra: install the wheel again with it, " in said
    assert f"pip install '<the threadline wheel>[{extra}]'" in said
    assert f"or pip install {' '.join(repr(package) for package in packages_of(extra))}" in said
    assert "pip install 'threadline[" not in said


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("THREADLINE_SECRET", "x", "must be at least 32 bytes long"),
        ("TRUSTED_PROXIES", "10.0.0.1,0.0.0.0/0", "must list your proxies, not every address"),
        ("TRUSTED_PROXIES", "::/0", "must list your proxies, not every address"),
        ("CHAT_ANONYMOUS_RETENTION_DAYS", "1e-9", "must be 0 (keep) or at least 0.042 (an hour)"),
        ("CHAT_CONVERSATION_RETENTION_DAYS", "0.001", "must be 0 (keep) or at least 0.042 (an hour)"),
        ("FILE_CHECK_SECONDS", "0", "must be more than 0"),
        ("CHAT_RATE_LIMIT", "0/minute", "must allow at least 1 request"),
    ],
)
def test_a_setting_that_would_open_or_break_the_server_stops_start_up(variable, value, said):
    with pytest.raises(SettingsError, match=re.escape(said)):
        load_settings({variable: value})
