"""Chat model factory: the configured provider's LangChain chat model."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from threadline.demo_model import DemoChatModel
from threadline.settings import Settings


def build_chat_model(settings: Settings) -> BaseChatModel:
    if settings.model_provider == "demo":
        return DemoChatModel(token_delay=settings.demo_token_delay_ms / 1000)
    if settings.model_provider == "gemini":
        from langchain_google_genai import ChatGoogleGenerativeAI

        # Few retries: a user is waiting, and the first-token timeout bounds the whole attempt anyway.
        return ChatGoogleGenerativeAI(
            model=settings.model_name,
            google_api_key=settings.google_api_key,
            base_url=settings.gemini_base_url,
            max_retries=2,
        )
    import httpx
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    return ChatOpenAI(
        model=settings.model_name,
        api_key=SecretStr(settings.openai_api_key or "unused"),  # local OpenAI-compatible servers often need none
        base_url=settings.openai_base_url,
        stream_usage=True,
        max_retries=2,
        # One HTTP client per app instance, bound to its event loop (langchain-openai's default is shared).
        http_async_client=httpx.AsyncClient(timeout=httpx.Timeout(60.0, connect=10.0)),
    )
