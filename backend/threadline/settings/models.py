"""The models' section of the settings: the profiles, and what a profile's model falls back on (the
CHAT_MODEL_* settings, the providers' keys and addresses, the demo model's pace)."""

from __future__ import annotations

from dataclasses import dataclass

from threadline.settings import Provider, Section
from threadline.settings.profiles import Profile


@dataclass(frozen=True)
class ModelSettings(Section):
    profiles: tuple[Profile, ...]  # CHAT_PROFILES; empty: the one the CHAT_MODEL_* settings describe
    model_provider: Provider  # CHAT_MODEL_PROVIDER
    model_name: str  # CHAT_MODEL_NAME
    google_api_key: str | None
    gemini_base_url: str | None
    openai_api_key: str | None
    openai_base_url: str | None
    demo_token_delay_ms: float  # CHAT_DEMO_TOKEN_DELAY_MS
