"""Model profiles: the models a team may use, listed once by the operator, picked per conversation.

`CHAT_PROFILES` holds a JSON list of profiles, or the path of a JSON or TOML file with one (TOML: a
`[[profiles]]` table per profile). `${NAME}` anywhere in it is read from the environment, so the file
holds no keys. Without it, the `CHAT_MODEL_*` variables make the one default profile.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

Provider = Literal["anthropic", "google", "openai", "openrouter", "ollama", "custom", "demo"]
PROVIDERS: tuple[str, ...] = Provider.__args__  # type: ignore[attr-defined]
OPENAI_COMPATIBLE = {"openai", "openrouter", "ollama", "custom"}
DEFAULT_BASE_URLS = {"openrouter": "https://openrouter.ai/api/v1", "ollama": "http://127.0.0.1:11434/v1"}
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ProfileError(ValueError):
    """A profile is not usable; the message names the profile and the field."""


# What an empty conversation offers: the demo model's own commands (each shows a feature offline), else
# prompts any assistant can take up.
DEMO_STARTERS = (
    "calculate (17 * 23) + 4",
    "What time is it in Asia/Tokyo?",
    "count to 20",
    "think about tide pools",
    "show me markdown",
)
GENERAL_STARTERS = (
    "Explain how DNS works, simply",
    "Help me write a friendly follow-up e-mail",
    "Plan a three-day trip to Lisbon",
    "What time is it in Tokyo?",
)


def default_starters(provider: str) -> tuple[str, ...]:
    return DEMO_STARTERS if provider == "demo" else GENERAL_STARTERS


class Profile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    provider: str
    model: str
    label: str = ""
    base_url: str | None = None
    api_key: str | None = None  # a secret: never listed, never logged
    system_prompt: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    context_limit: int | None = None
    enable_thinking: bool = False
    thinking_budget: int = 10_000
    require_approval: tuple[str, ...] = ()  # tool names or globs that wait for the person's approval
    auto_approve: tuple[str, ...] = ()  # … that never do, whatever their MCP server says
    suggestions: bool | None = None  # suggested replies and actions after each answer (one more model call)
    starters: tuple[str, ...] | None = None  # prompts the page offers in an empty conversation; else CHAT_STARTERS
    # What its model reads besides text: "image", "pdf" (text files arrive as text); else its provider's default.
    inputs: tuple[Literal["text", "image", "pdf"], ...] | None = None
    default: bool = False

    @property
    def reads(self) -> frozenset[str]:
        """The kinds of attachment this profile's model takes: its `inputs`, else what its provider's API takes
        (an OpenAI-compatible server of unknown abilities: text only)."""
        if self.inputs is not None:
            return frozenset(self.inputs) | {"text"}
        return frozenset({"text"} if self.provider == "custom" else {"text", "image", "pdf"})

    @property
    def suggests(self) -> bool:
        """Unless the profile says, only the demo model suggests: it is free, and a paid model's extra call is not."""
        return self.provider == "demo" if self.suggestions is None else self.suggestions

    @property
    def model_label(self) -> str:
        """What answers' metadata and the log name: `provider:model`."""
        return f"{self.provider}:{self.model}"

    def public(self, starters: tuple[str, ...] = ()) -> PublicProfile:
        """What anyone may see of it (GET /api/profiles): no key, no address, no prompt. `starters`: the
        prompts offered in an empty conversation when the profile names none."""
        return PublicProfile(
            id=self.id,
            label=self.label or self.model,
            provider=self.provider,
            model=self.model,
            default=self.default,
            thinking=self.enable_thinking,
            inputs=sorted(self.reads),
            starters=list(self.starters or starters or default_starters(self.provider)),
        )


class PublicProfile(msgspec.Struct, frozen=True):
    """A model profile as GET /api/profiles shows it."""

    id: str
    label: str
    provider: str
    model: str
    default: bool
    thinking: bool
    inputs: list[str]  # the kinds of files its model reads
    starters: list[str]  # what an empty conversation offers with it


def _check(profile: Profile) -> Profile:
    where = f"CHAT_PROFILES: profile {profile.id!r}"
    if not profile.id.strip():
        raise ProfileError("CHAT_PROFILES: every profile needs an id")
    if not profile.provider.strip():
        raise ProfileError(f"{where}: Provider is required (provider)")
    if profile.provider not in PROVIDERS:
        raise ProfileError(f"{where}: provider must be one of {', '.join(PROVIDERS)} (got {profile.provider!r})")
    if not profile.model.strip():
        raise ProfileError(f"{where}: Model is required (model)")
    if profile.provider == "custom" and not profile.base_url:
        raise ProfileError(f"{where}: a custom provider needs a base_url (base_url)")
    if profile.temperature is not None and not 0 <= profile.temperature <= 2:
        raise ProfileError(f"{where}: temperature must be between 0 and 2 (temperature)")
    for field in ("max_tokens", "context_limit", "thinking_budget"):
        value = getattr(profile, field)
        if value is not None and value < 1:
            raise ProfileError(f"{where}: {field} must be a positive number of tokens ({field})")
    return profile


def _text_of(raw: str) -> tuple[str, bool]:
    """The profiles' source text, and whether it is TOML: inline JSON, or the path of a file."""
    stripped = raw.strip()
    if stripped.startswith(("[", "{")):
        return stripped, False
    path = Path(stripped).expanduser()
    try:
        return path.read_text(encoding="utf-8"), path.suffix.lower() == ".toml"
    except OSError as error:
        raise ProfileError(f"CHAT_PROFILES: cannot read {path}: {error.strerror}") from None


def _resolve(value: Any, env: Mapping[str, str]) -> Any:
    """`${NAME}` references replaced by the environment's values, in every string of the parsed profiles."""
    if isinstance(value, str):

        def lookup(match: re.Match[str]) -> str:
            if match.group(1) not in env:
                raise ProfileError(f"CHAT_PROFILES refers to ${{{match.group(1)}}}, which is not set")
            return env[match.group(1)]

        return _REFERENCE.sub(lookup, value)
    if isinstance(value, list):
        return [_resolve(item, env) for item in value]
    if isinstance(value, dict):
        return {key: _resolve(item, env) for key, item in value.items()}
    return value


def parse_profiles(raw: str, env: Mapping[str, str] | None = None) -> tuple[Profile, ...]:
    """The profiles CHAT_PROFILES lists, checked; ProfileError names the first bad one and its field."""
    text, is_toml = _text_of(raw)
    try:
        data = tomllib.loads(text).get("profiles", []) if is_toml else json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as error:
        raise ProfileError(f"CHAT_PROFILES is not valid {'TOML' if is_toml else 'JSON'}: {error}") from None
    if isinstance(data, dict):
        data = data.get("profiles", [])
    if not isinstance(data, list) or not data:
        raise ProfileError("CHAT_PROFILES must list at least one profile")
    profiles = []
    for index, item in enumerate(_resolve(data, os.environ if env is None else env)):
        try:
            profiles.append(_check(msgspec.convert(item, Profile)))
        except msgspec.ValidationError as error:
            name = item.get("id", f"#{index + 1}") if isinstance(item, dict) else f"#{index + 1}"
            raise ProfileError(f"CHAT_PROFILES: profile {name!r}: {error}") from None
    ids = [profile.id for profile in profiles]
    if len(set(ids)) != len(ids):
        raise ProfileError("CHAT_PROFILES: profile ids must be unique")
    if sum(profile.default for profile in profiles) > 1:
        raise ProfileError("CHAT_PROFILES: only one profile may be the default")
    if not any(profile.default for profile in profiles):
        profiles[0] = msgspec.structs.replace(profiles[0], default=True)  # the first, when none says
    return tuple(profiles)


def default_of(profiles: tuple[Profile, ...]) -> Profile:
    return next(profile for profile in profiles if profile.default)
