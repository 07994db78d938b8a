"""Settings read once from the environment and validated, so a typo stops start-up with one clear line.

Each setting is declared once, as a field of its section: `models`, `agents`, `answers`, `storage`, `files`,
`auth`, `limits`, `mcp`, `observability`, `server` (a module each). A field says its type (a `Literal` for a closed
set), its default, its bounds and its environment variable with a line of help, in `Annotated[…, env(…)]`; the
reader (`reading.py`), the errors and the configuration reference in the docs (`reference_rows`) all come from
there. `Settings` is the sections together, and a service is handed the sections it needs, not the whole. The two
settings that are documents of their own are parsed apart: `profiles` (CHAT_PROFILES) and `mcp_servers`
(MCP_SERVERS).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from threadline.settings.agents import AgentSettings
from threadline.settings.answers import AnswerSettings
from threadline.settings.auth import AuthSettings
from threadline.settings.files import FileSettings
from threadline.settings.limits import LimitSettings
from threadline.settings.mcp import McpSettings
from threadline.settings.mcp_servers import McpConfigError, parse_servers
from threadline.settings.models import DEFAULT_MODEL_NAMES, ModelSettings, Provider
from threadline.settings.observability import ObservabilitySettings
from threadline.settings.profiles import ProfileError, parse_profiles
from threadline.settings.reading import PREFIX, Section, SettingsError, Variable, read, variables_of
from threadline.settings.server import ServerSettings
from threadline.settings.storage import StorageSettings

__all__ = ["Settings", "SettingsError", "given", "load_settings", "replaced"]


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Every setting, by section, in the configuration reference's order."""

    models: ModelSettings = ModelSettings()
    agents: AgentSettings = AgentSettings()
    answers: AnswerSettings = AnswerSettings()
    storage: StorageSettings = StorageSettings()
    files: FileSettings = FileSettings()
    auth: AuthSettings = AuthSettings()
    limits: LimitSettings = LimitSettings()
    mcp: McpSettings = McpSettings()
    observability: ObservabilitySettings = ObservabilitySettings()
    server: ServerSettings = ServerSettings()


DEFAULTS = Settings()
# Each section's struct by its field of `Settings`; and every setting, by its field in its section.
SECTIONS: dict[str, type[Section]] = {name: type(getattr(DEFAULTS, name)) for name in Settings.__struct_fields__}
VARIABLES: dict[str, Variable] = {
    variable.field: variable for name, struct in SECTIONS.items() for variable in variables_of(name, struct)
}


def replaced(settings: Settings, **values: Any) -> Settings:
    """`settings` with some settings changed, each named by its field whatever its section (`model_provider="demo"`):
    what a test or a host app building its `Settings` in code writes."""
    if unknown := sorted(set(values) - set(VARIABLES)):
        raise TypeError(f"no such setting: {', '.join(unknown)}")
    changes: dict[str, dict[str, Any]] = {}
    for field, value in values.items():
        changes.setdefault(VARIABLES[field].section, {})[field] = value
    sections = {name: msgspec.structs.replace(getattr(settings, name), **fields) for name, fields in changes.items()}
    return msgspec.structs.replace(settings, **sections)


def given(env_vars: Mapping[str, str], field: str) -> str:
    """The text of the setting `field`'s variable (the first of its names set), stripped; empty when none is set."""
    return next((value for name in VARIABLES[field].env.names if (value := env_vars.get(name, "").strip())), "")


def _parsed(env_vars: Mapping[str, str], field: str, parse: Callable[[str, Mapping[str, str]], Any]) -> Any:
    """A setting that is a document of its own (the profiles, the MCP servers), parsed with the environment."""
    try:
        return parse(given(env_vars, field), env_vars)
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
    values = {field: read(env_vars, variable) for field, variable in VARIABLES.items()}
    if not given(env_vars, "model_provider"):
        values["model_provider"] = provider_by_key(values)
    if not given(env_vars, "model_name"):
        values["model_name"] = DEFAULT_MODEL_NAMES[values["model_provider"]]
    for field, parse in (("profiles", parse_profiles), ("mcp_servers", parse_servers)):
        if given(env_vars, field):
            values[field] = _parsed(env_vars, field, parse)
    _check_together(values)
    _check_extras(values)
    sections: dict[str, Any] = {
        name: struct(**{field: values[field] for field in struct.__struct_fields__})
        for name, struct in SECTIONS.items()
    }
    return Settings(**sections)


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


def reference_rows(section: str) -> list[tuple[str, str, str]]:
    """One section of the configuration reference, a row per setting: its variable(s), its default and its help."""
    rows = []
    for variable in (VARIABLES[field] for field in SECTIONS[section].__struct_fields__):
        names = " or ".join(f"`{name}`" for name in variable.env.names)
        default = variable.default
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
