"""Chat models: each profile's LangChain chat model, for its provider, with its parameters applied."""

from __future__ import annotations

import urllib.parse
from typing import Any

import httpx
from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from threadline.agent.demo_model import DemoChatModel
from threadline.settings.models import ModelSettings
from threadline.settings.profiles import DEFAULT_BASE_URLS, OPENAI_COMPATIBLE, Profile
from threadline.turn_context import ProviderBusy, tell_the_turn

PROVIDER_OF_SETTING = {"gemini": "google", "openai": "openai", "demo": "demo"}
ANTHROPIC_MAX_TOKENS = 4_096  # the Messages API needs one; a profile's max_tokens overrides it


def profiles_of(settings: ModelSettings) -> tuple[Profile, ...]:
    """CHAT_PROFILES, or the one profile the CHAT_MODEL_* variables describe."""
    if settings.profiles:
        return settings.profiles
    provider = PROVIDER_OF_SETTING[settings.model_provider]
    return (
        Profile(id="default", label=settings.model_name, provider=provider, model=settings.model_name, default=True),
    )


def is_openai(base_url: str | None) -> bool:
    """Whether an `openai` profile talks to OpenAI itself (or Azure's OpenAI), not to a compatible server."""
    host = urllib.parse.urlsplit(base_url).hostname or "" if base_url else "api.openai.com"
    return host == "api.openai.com" or host.endswith(".openai.azure.com")


def build_chat_model(profile: Profile, settings: ModelSettings) -> BaseChatModel:
    """The profile's model; keys and addresses the profile leaves out come from the CHAT_MODEL_* settings.

    Few retries everywhere: a user is waiting, and the first-token timeout bounds the attempt anyway."""
    sampling: dict[str, Any] = {"temperature": profile.temperature} if profile.temperature is not None else {}
    if profile.provider == "demo":
        return DemoChatModel(token_delay=settings.demo_token_delay_ms / 1000)
    if profile.provider == "google":
        return _gemini(profile, settings, sampling)
    if profile.provider == "anthropic":
        return _claude(profile, sampling)
    return _openai_compatible(profile, settings, sampling)


def _gemini(profile: Profile, settings: ModelSettings, sampling: dict[str, Any]) -> BaseChatModel:
    from langchain_google_genai import ChatGoogleGenerativeAI

    if profile.enable_thinking:
        sampling |= {"thinking_budget": profile.thinking_budget, "include_thoughts": True}
    return ChatGoogleGenerativeAI(
        model=profile.model,
        google_api_key=profile.api_key or settings.google_api_key,
        base_url=profile.base_url or settings.gemini_base_url,
        max_output_tokens=profile.max_tokens,
        max_retries=2,
        **sampling,
    )


def _claude(profile: Profile, sampling: dict[str, Any]) -> BaseChatModel:
    from langchain_anthropic import ChatAnthropic

    max_tokens = profile.max_tokens or ANTHROPIC_MAX_TOKENS
    if profile.enable_thinking:  # the API allows no temperature with thinking, and wants room for both
        sampling = {"thinking": {"type": "enabled", "budget_tokens": profile.thinking_budget}}
        max_tokens = profile.max_tokens or ANTHROPIC_MAX_TOKENS + profile.thinking_budget
    return ChatAnthropic(  # type: ignore[call-arg]
        model_name=profile.model,
        api_key=SecretStr(profile.api_key or "unused"),
        base_url=profile.base_url,
        max_tokens=max_tokens,
        max_retries=2,
        streaming=True,
        stream_usage=True,
        **sampling,
    )


def _openai_compatible(profile: Profile, settings: ModelSettings, sampling: dict[str, Any]) -> BaseChatModel:
    assert profile.provider in OPENAI_COMPATIBLE, profile.provider
    base_url = profile.base_url or DEFAULT_BASE_URLS.get(profile.provider)
    if profile.provider == "openai" and base_url is None:
        base_url = settings.openai_base_url
    options: dict[str, Any] = {
        "model": profile.model,
        "api_key": SecretStr(profile.api_key or settings.openai_api_key or "unused"),  # local servers often need none
        "max_tokens": profile.max_tokens,
        "stream_usage": True,
        "max_retries": 2,
        # One HTTP client per app instance, bound to its event loop (langchain-openai's default is shared).
        "http_async_client": httpx.AsyncClient(
            timeout=httpx.Timeout(60.0, connect=10.0), event_hooks={"response": [_note_rate_limit]}
        ),
        **sampling,
    }
    if profile.provider == "openai" and is_openai(base_url):
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(base_url=base_url, **options)
    assert base_url is not None  # a custom profile must name one; the others have a default
    # vLLM, DeepSeek, Ollama and OpenRouter stream reasoning beside the content (`reasoning_content`, or
    # `reasoning` on OpenRouter), which ChatOpenAI drops; langchain-deepseek's subclass keeps it. So does an
    # `openai` profile whose base URL points at such a server ("any OpenAI-compatible server").
    from langchain_deepseek import ChatDeepSeek

    return ChatDeepSeek(base_url=base_url, **options)


async def _note_rate_limit(response: httpx.Response) -> None:
    """A provider's 429, told to the answer waiting on it: the client library waits and asks again, which is the
    provider's doing, not the agent's silence (answers/turn.py)."""
    if response.status_code == 429:
        tell_the_turn(ProviderBusy(_retry_after(response.headers)))


def _retry_after(headers: httpx.Headers) -> float:
    """The seconds a 429 asks to wait (`retry-after-ms`, or `retry-after` in seconds), as the OpenAI library reads
    them: over a minute, or unreadable, it backs off by itself, about a second first."""
    try:
        seconds = (
            float(headers["retry-after-ms"]) / 1000 if "retry-after-ms" in headers else float(headers["retry-after"])
        )
    except (KeyError, ValueError):
        return 1.0
    return seconds if 0 < seconds <= 60 else 1.0
