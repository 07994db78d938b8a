"""The provider stand-ins the public agents' own models reach, and where their sources are."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from threadline_testing import standins

SOURCES = Path(__file__).resolve().parent / "sources"


@contextmanager
def standin_for(provider: str, url_variable: str, key_variable: str) -> Iterator[standins.StandIn]:
    """One stand-in of `provider` for a module, where an agent's own `init_chat_model(...)` reaches it through
    the provider's variables (an agent module makes its model once, when it is first imported), and the
    agents' sources importable."""
    standin = standins.start(provider)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("ANTHROPIC_API_URL", raising=False)  # langchain-anthropic reads it before ANTHROPIC_BASE_URL
        patch.setenv(url_variable, standin.base_url)
        patch.setenv(key_variable, "sk-test")
        patch.syspath_prepend(str(SOURCES))
        yield standin
    standin.stop()


def unscripted(standin: standins.StandIn) -> standins.StandIn:
    """The stand-in with no script and no calls yet, for the next test."""
    standin.script = None
    standin.calls.clear()
    return standin


@pytest.fixture(scope="module")
def anthropic_standin():
    with standin_for("anthropic", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY") as standin:
        yield standin


@pytest.fixture
def anthropic(anthropic_standin):
    return unscripted(anthropic_standin)


@pytest.fixture(scope="module")
def openai_standin():
    with standin_for("openai", "OPENAI_BASE_URL", "OPENAI_API_KEY") as standin:
        yield standin


@pytest.fixture
def openai(openai_standin):
    return unscripted(openai_standin)
