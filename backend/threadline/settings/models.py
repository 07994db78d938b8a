"""The models' settings: the profiles, and what a profile's model falls back on (the CHAT_MODEL_* settings,
the providers' keys and addresses, the demo model's pace)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec

from threadline.settings.profiles import Profile
from threadline.settings.reading import Section, env, read_elsewhere

Provider = Literal["gemini", "openai", "demo"]


# Seed 000 named gemini-1.5-flash, which Google has retired: a real key with it fails.
DEFAULT_MODEL_NAMES = {"gemini": "gemini-2.5-flash", "openai": "gpt-4o-mini", "demo": "demo"}


class ModelSettings(Section, frozen=True, kw_only=True):
    TITLE: ClassVar[str] = "Models and profiles"

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
            read=read_elsewhere,
        ),
    ] = ()
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
    demo_token_delay_ms: Annotated[
        float,
        msgspec.Meta(ge=0.0, le=10_000.0),
        env("CHAT_DEMO_TOKEN_DELAY_MS", help="the demo model's pause between tokens"),
    ] = 15.0
