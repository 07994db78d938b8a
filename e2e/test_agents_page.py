"""The chat page with a team's own agent (THREADLINE_GRAPH, examples/): the agent's question answered in its card,
after a reload too, its progress notes, and an approval of a `create_agent` agent's tool call."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from chat_page import ChatPage
from launch import ROOT, threadline_server
from playwright.sync_api import Page, expect
from test_public_agents import quickstart_script, team_script
from threadline_testing import standins


@pytest.fixture(scope="module")
def research(e2e_database, tmp_path_factory) -> Iterator[str]:
    graph = f"{ROOT / 'examples' / 'research.py'}:graph"
    with threadline_server(e2e_database, tmp_path_factory.mktemp("research"), THREADLINE_GRAPH=graph) as url:
        yield url


@pytest.fixture(scope="module")
def assistant(e2e_database, tmp_path_factory) -> Iterator[str]:
    graph = f"{ROOT / 'examples' / 'assistant.py'}:graph"
    with threadline_server(e2e_database, tmp_path_factory.mktemp("assistant"), THREADLINE_GRAPH=graph) as url:
        yield url


@pytest.fixture(scope="module")
def speakers(e2e_database, tmp_path_factory) -> Iterator[str]:
    """A langgraph.json with two agents (and a graph without messages, which is not served)."""
    graph = str(ROOT / "backend" / "tests" / "agents" / "speakers" / "langgraph.json")
    with threadline_server(e2e_database, tmp_path_factory.mktemp("speakers"), THREADLINE_GRAPH=graph) as url:
        yield url


def test_a_new_chat_picks_one_of_several_agents_and_keeps_it(page: Page, speakers: str):
    chat = ChatPage.open(page, speakers)
    picker = page.get_by_test_id("agent-picker")
    expect(picker).to_have_value("writer")
    expect(picker.locator("option")).to_have_text(["writer", "critic"])
    # each agent's welcome offers its own prompts (its langgraph.json's starters), else the model profile's
    expect(page.get_by_test_id("example-prompt")).to_have_text(["Draft a note to the team", "Write a haiku about rain"])
    picker.select_option("critic")
    expect(page.get_by_test_id("example-prompt").first).not_to_have_text("Draft a note to the team")
    chat.ask("hello")
    expect(chat.assistant).to_contain_text("critic here, after 1 messages")
    expect(page.get_by_test_id("agent-picker")).to_have_count(0)
    expect(page.get_by_test_id("agent-name")).to_have_text("critic")
    page.reload()
    expect(page.get_by_test_id("agent-name")).to_have_text("critic")
    chat.ask("again")
    expect(chat.assistant).to_contain_text("critic here, after 3 messages")
    page.get_by_role("button", name="New chat").first.click()
    expect(page.get_by_test_id("agent-picker")).to_have_value("writer")


def test_the_agents_question_is_answered_in_its_card_after_a_reload(page: Page, research: str):
    chat = ChatPage.open(page, research)
    chat.ask("research tide pools")
    question = page.get_by_test_id("agent-question")
    expect(question).to_contain_text("Which aspect of tide pools should I look into?")
    chat.wait_until_answered()
    page.reload()
    question = page.get_by_test_id("agent-question")
    expect(question).to_contain_text("Which aspect of tide pools should I look into?")
    question.get_by_role("button", name="geology").click()
    progress = page.get_by_test_id("agent-data-progress")
    expect(progress).to_contain_text("2/2 · Sandstone, granite and the shape of pools")
    expect(chat.assistant).to_contain_text("Summarize what the sources say about geology")
    chat.wait_until_answered()
    expect(page.get_by_label("Your reply")).to_have_count(0)  # answered: no reply box any more
    page.reload()
    expect(chat.assistant).to_contain_text("Summarize what the sources say about geology")
    expect(chat.user_messages).to_have_count(1)
    # The question and the reply the person chose stay where they were asked
    expect(page.get_by_test_id("agent-question")).to_contain_text("Which aspect of tide pools should I look into?")
    expect(page.get_by_test_id("agent-replied")).to_have_text("You replied: geology")
    expect(progress).to_contain_text("2/2 · Sandstone, granite and the shape of pools")  # the agent's progress too


def test_a_reply_typed_into_the_card_resumes_the_answer(page: Page, research: str):
    chat = ChatPage.open(page, research)
    chat.ask("research tide pools")
    expect(page.get_by_test_id("question-waits")).to_contain_text("waits for your reply")  # said at the box
    page.get_by_label("Your reply").fill("safety")
    page.get_by_role("button", name="Reply").click()
    expect(page.get_by_test_id("agent-data-progress")).to_contain_text("Slippery algae")
    expect(chat.assistant).to_contain_text("safety")
    expect(page.get_by_test_id("agent-replied")).to_have_text("You replied: safety")
    expect(page.get_by_test_id("question-waits")).to_have_count(0)


def test_a_create_agent_tool_call_waits_for_approval_on_the_page(page: Page, assistant: str):
    chat = ChatPage.open(page, assistant)
    chat.ask("calculate 6*7")
    card = chat.tool_cards.last
    expect(card).to_contain_text("Needs your approval")
    expect(card.get_by_test_id("approval-reason")).to_have_text(
        "The calculator evaluates this expression on the server: check it, or change it first."
    )
    card.get_by_test_id("approve").click()
    expect(chat.assistant).to_contain_text("calculator returned 42")
    chat.wait_until_answered()


def test_an_approval_may_change_the_input_where_the_agent_allows_it(page: Page, assistant: str):
    chat = ChatPage.open(page, assistant)
    chat.ask("calculate 2+3")
    card = chat.tool_cards.last
    expect(card).to_contain_text("Needs your approval")
    card.get_by_test_id("edit-input").click()
    card.get_by_test_id("edited-input").fill("[not an object")
    expect(card.get_by_test_id("approve-edited")).to_be_disabled()
    card.get_by_test_id("edited-input").fill('{"expression": "6*7"}')
    card.get_by_test_id("approve-edited").click()
    # HumanInTheLoopMiddleware tells the model that a person replaced the call, and what ran instead.
    expect(chat.assistant).to_contain_text('Executed instead: calculator with arguments {"expression": "6*7"}')
    expect(chat.tool_cards.last).to_contain_text("42")
    chat.wait_until_answered()
    page.reload()
    expect(chat.tool_cards.last).to_contain_text("Done")
    expect(chat.assistant).to_contain_text("Executed instead")


@contextmanager
def public_agent(database: str, data_dir: Path, graph: str, provider: str, script) -> Iterator[str]:
    """A public agent of backend/tests/agents/sources/ served as a user runs it, its model the `provider` stand-in
    following `script`, reached through the provider's own variables."""
    standin = standins.start(provider)
    standin.script = script
    variable = {"anthropic": "ANTHROPIC", "openai": "OPENAI"}[provider]
    env = {
        "THREADLINE_GRAPH": str(ROOT / "backend" / "tests" / "agents" / "sources" / graph),
        f"{variable}_BASE_URL": standin.base_url,
        f"{variable}_API_KEY": "sk-test",
    }
    try:
        with threadline_server(database, data_dir, **env) as url:
            yield url
    finally:
        standin.stop()


@pytest.fixture(scope="module")
def quickstart(e2e_database, tmp_path_factory) -> Iterator[str]:
    """The LangChain quickstart's agent, its model the Anthropic stand-in."""
    data_dir = tmp_path_factory.mktemp("quickstart")
    with public_agent(e2e_database, data_dir, "quickstart.py:agent", "anthropic", quickstart_script) as url:
        yield url


@pytest.fixture(scope="module")
def supervisor(e2e_database, tmp_path_factory) -> Iterator[str]:
    """langgraph-supervisor's README team, its model the OpenAI stand-in."""
    data_dir = tmp_path_factory.mktemp("supervisor")
    with public_agent(e2e_database, data_dir, "supervisor.py:app", "openai", team_script) as url:
        yield url


def test_each_agent_of_a_team_is_named_where_it_starts_speaking(page: Page, supervisor: str):
    chat = ChatPage.open(page, supervisor)
    chat.ask("what's 3 + 4?")
    chat.wait_until_answered()
    expect(page.get_by_test_id("agent-label")).to_have_text(["supervisor", "math_expert", "supervisor"])
    # The handoffs are lines saying who takes over, not tool cards named transfer_to_…
    expect(page.get_by_test_id("handoff")).to_have_text(["→ math_expert", "→ supervisor"])
    # langgraph-supervisor's "Transferring back to supervisor" is its handoff's line, not the worker's words
    expect(page.get_by_test_id("answer-text").filter(has_text="Transferring")).to_have_count(0)
    expect(chat.tool_cards.get_by_test_id("tool-name")).to_have_text(["add"])
    page.reload()
    expect(page.get_by_test_id("agent-label")).to_have_text(["supervisor", "math_expert", "supervisor"])
    expect(page.get_by_test_id("handoff")).to_have_text(["→ math_expert", "→ supervisor"])
    expect(page.get_by_test_id("answer-text").filter(has_text="Transferring")).to_have_count(0)


def test_a_structured_answer_is_shown_by_its_fields_after_a_reload_too(page: Page, quickstart: str):
    chat = ChatPage.open(page, quickstart)
    chat.ask("what is the weather outside?")
    chat.wait_until_answered()
    answer = page.get_by_test_id("structured-response")
    expect(answer).to_contain_text("punny response")
    expect(answer).to_contain_text("Sun-believable!")
    expect(page.get_by_test_id("tool-card")).to_have_count(3)
    page.reload()
    expect(page.get_by_test_id("structured-response")).to_contain_text("weather conditions")
