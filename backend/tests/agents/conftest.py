"""The provider stand-ins the public agents' own models reach, and where their sources are."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import standin_for
from threadline_testing import standins

SOURCES = Path(__file__).resolve().parent / "sources"
# The agents' sources importable, as their authors' repositories are to them: for the whole session, since a test's
# own monkeypatch of sys.path, undone, would take away what a module's fixture added meanwhile.
if str(SOURCES) not in sys.path:
    sys.path.insert(0, str(SOURCES))


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
