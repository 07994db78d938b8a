"""Fixtures: a real PostgreSQL database per test session and settings for apps on it.

Helpers the tests import live in helpers.py: two directories have a conftest.py, so importing
from `conftest` would be ambiguous.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from threadline.settings import Settings, replaced
from threadline_testing import standins
from threadline_testing.database import fresh_database


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A fresh database for this test session, dropped at the end."""
    with fresh_database(tmp_path_factory.mktemp("pg")) as url:
        yield url


@pytest.fixture
def make_settings(database_url: str, tmp_path: Path):
    def make(**overrides) -> Settings:
        values = dict(
            model_provider="demo",
            model_name="demo",
            database_url=database_url,
            demo_token_delay_ms=0.0,
            data_dir=tmp_path / "data",
            # A new conversation's title is one more model call, made beside the answer: tests that count a
            # provider's calls or read titles as first words would see it. test_titles.py turns it on.
            generated_titles=False,
        )
        return replaced(Settings(), **(values | overrides))

    return make


@pytest.fixture
def openai_settings(make_settings):
    """Settings for apps on the OpenAI stand-in (threadline_testing.standins: its texts script faults)."""
    standin = standins.start("openai")
    yield lambda **extra: make_settings(
        model_provider="openai",
        model_name="gpt-standin",
        openai_api_key="sk-test",
        openai_base_url=standin.base_url,
        **extra,
    )
    standin.stop()
