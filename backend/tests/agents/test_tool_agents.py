"""Public agents whose tools are code, a database, a store of their own or OpenAI's Responses API, served
unchanged (sources/README.md says what a test had to replace), their models answered by the provider stand-ins and
read by the real `ai` 7 and `ai` 4 clients."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3

import pytest
from helpers import chat, chat_body, new_conversation_id, running, serving
from test_agents import accepted, parts, texts
from test_public_agents import SOURCES, converse, history_of, reload_then_stop, shown, slowly
from threadline_testing.ai_sdk import read_with_ai4
from threadline_testing.standins import Call, Reply

CODEACT = f"{SOURCES / 'langgraph-codeact' / 'examples' / 'math_example.py'}:agent"


@pytest.fixture
def codeact_installed(monkeypatch):
    """langgraph-codeact importable, as `pip install langgraph-codeact` makes it for its example."""
    monkeypatch.syspath_prepend(str(SOURCES / "langgraph-codeact"))


def codeact_script(call: Call) -> Reply | None:
    """langgraph-codeact's model: answers with code that calls its tools (or imports a module, when asked), then
    says what the code printed (the sandbox's output comes back as a user message)."""
    asked = call.users[-1]
    if asked.startswith("add "):
        a, b = asked.removeprefix("add ").split(" and ")
        return Reply(text=f"Let me compute it.\n\n```python\nprint(add({a}, {b}))\n```")
    if asked.startswith("the square root of "):
        number = asked.removeprefix("the square root of ")
        return Reply(text=f"```python\nimport math\nprint(math.sqrt({number}))\n```")
    return Reply(text=f"The code printed {asked.strip()}.")


async def test_codeact_runs_its_code_and_says_what_it_printed(make_settings, anthropic, codeact_installed):
    """Its code is part of what it says; the sandbox's output, which it writes as a user message, is its own and not
    a bubble; the history is what was shown, turn after turn; `ai` 4 reads it."""
    anthropic.script = codeact_script
    async with running(make_settings(graph=CODEACT)) as client:
        conversation_id = new_conversation_id()
        live = await converse(client, conversation_id, ["add 2 and 3", "add 4 and 5"])
        history = await history_of(client, conversation_id)
        response = await client.post("/api/chat?protocol=data-stream", json=chat_body(conversation_id, "add 1 and 1"))
    assert texts(live[0]) == "Let me compute it.\n\n```python\nprint(add(2, 3))\n```The code printed 5."
    assert texts(live[1]).endswith("The code printed 9.")
    assert [texts(message) for message in history[0::2]] == ["add 2 and 3", "add 4 and 5"]
    assert [shown(message) for message in history[1::2]] == [shown(message) for message in live]
    assert read_with_ai4(response.content)["message"]["content"].endswith("The code printed 2.")


async def test_codeact_keeping_a_module_in_its_state_is_an_agent_error_that_keeps_what_was_shown(
    make_settings, anthropic, codeact_installed
):
    """Code that imports a module leaves the module among its variables, which no checkpointer can save
    (LangGraph's own server fails alike): AGENT_ERROR naming the type, what it said kept, the next message works."""
    anthropic.script = codeact_script
    async with running(make_settings(graph=CODEACT)) as client:
        conversation_id = new_conversation_id()
        _, _, chunks = await chat(client, conversation_id, "the square root of 16")
        history = await history_of(client, conversation_id)
        _, raw, _ = await chat(client, conversation_id, "add 2 and 3")
    (error,) = [chunk for chunk in chunks if chunk["type"] == "error"]
    assert "state could not be saved (Type is not msgpack serializable: module)" in error["errorText"]
    assert "import math" in texts(history[1]), "what it showed is kept"
    assert texts(accepted(raw)["message"]).endswith("The code printed 5.")


@pytest.fixture
def text_to_sql(tmp_path, monkeypatch):
    """deepagents' text-to-sql example in a folder of its own, with the Chinook database its README downloads, here
    its customers table only (three customers, two in Canada)."""
    folder = tmp_path / "text-to-sql-agent"
    shutil.copytree(SOURCES / "text-to-sql-agent", folder)
    with sqlite3.connect(folder / "chinook.db") as database:
        database.execute("CREATE TABLE Customer (CustomerId INTEGER PRIMARY KEY, FirstName TEXT, Country TEXT)")
        people = [(1, "François", "Canada"), (2, "Mark", "Canada"), (3, "Luís", "Brazil")]
        database.executemany("INSERT INTO Customer VALUES (?, ?, ?)", people)
    monkeypatch.chdir(folder)  # its memory and skills are named relative to where it runs
    return f"{folder / 'agent.py'}:create_sql_deep_agent"


def sql_script(call: Call) -> Reply | None:
    """The text-to-sql agent's model: lists the tables, queries one, answers from the rows."""
    if "sql_db_query" not in call.tools:
        return None
    if call.last_result is None:
        return Reply(tool=("sql_db_list_tables", {"tool_input": ""}))
    if call.results[-1] == "sql_db_list_tables":
        query = "SELECT COUNT(*) FROM Customer WHERE Country = 'Canada'"
        return Reply(tool=("sql_db_query", {"query": query}))
    return Reply(text=f"There are {call.last_result.strip('[](),')} customers in Canada.")


async def test_the_text_to_sql_agent_from_its_factory_queries_its_database(make_settings, anthropic, text_to_sql):
    """A factory of no arguments (`create_sql_deep_agent`); its SQL tools' calls and results shown and kept, its
    answer from the rows; `ai` 4 reads it."""
    anthropic.script = sql_script
    async with running(make_settings(graph=text_to_sql)) as client:
        conversation_id = new_conversation_id()
        live = await converse(client, conversation_id, ["How many customers are from Canada?", "and again?"])
        history = await history_of(client, conversation_id)
        response = await client.post("/api/chat?protocol=data-stream", json=chat_body(conversation_id, "once more"))
    (tables,) = parts(live[0], "tool-sql_db_list_tables")
    assert tables["state"] == "output-available" and tables["output"] == "Customer"
    (query,) = parts(live[0], "tool-sql_db_query")
    assert query["state"] == "output-available" and query["output"] == "[(2,)]"
    assert texts(live[0]) == "There are 2 customers in Canada."
    assert [shown(message) for message in history[1::2]] == [shown(message) for message in live]
    read = read_with_ai4(response.content)["message"]
    assert read["content"] == "There are 2 customers in Canada."
    assert [call["toolName"] for call in read["toolInvocations"]] == ["sql_db_list_tables", "sql_db_query"]


def notes_script(call: Call) -> Reply | None:
    """The README agent's model: looks up notes, then summarises them."""
    if "my_custom_tool" not in call.tools:
        return None
    if call.last_result is None:
        return Reply(text="Looking it up.", tool=("my_custom_tool", {"topic": call.users[-1]}))
    return Reply(text=f"Summary: {call.last_result}")


async def test_deepagents_readme_agent_on_the_responses_api_finishes_each_call_live(make_settings, openai):
    """Each model call on OpenAI's Responses API streams under two message ids: one call is one message, its tool
    result shown when its call ends, live as in the history."""
    openai.script = notes_script
    async with running(make_settings(graph="deepagents_readme:agent")) as client:
        conversation_id = new_conversation_id()
        live = await converse(client, conversation_id, ["LangGraph", "LangChain"])
        history = await history_of(client, conversation_id)
        response = await client.post("/api/chat?protocol=data-stream", json=chat_body(conversation_id, "LangSmith"))
    (looked_up,) = parts(live[0], "tool-my_custom_tool")
    assert looked_up["state"] == "output-available" and looked_up["output"].startswith("Notes on LangGraph")
    assert texts(live[0]) == "Looking it up.Summary: Notes on LangGraph: it is a graph runtime."
    assert [shown(message) for message in history[1::2]] == [shown(message) for message in live]
    assert all(request.get("input") for request in openai.requests), "the Responses API, as deepagents chose"
    read = read_with_ai4(response.content)["message"]
    assert read["content"].endswith("Summary: Notes on LangSmith: it is a graph runtime.")
    assert live[0]["metadata"]["model"] == "openai:gpt-5.5"


@pytest.mark.parametrize(
    ("graph", "provider", "script"),
    [
        ("deepagents_readme:agent", "openai", notes_script),
        (CODEACT, "anthropic", codeact_script),
        ("", "", sql_script),
        ("langmem_readme:agent", "anthropic", lambda call: None),
    ],
    ids=["deepagents-responses-api", "codeact", "text-to-sql", "langmem"],
)
def test_a_tool_agents_answer_resumes_after_a_reload_a_stop_keeps_what_it_said_and_ai4_reads_it(
    make_settings, request, codeact_installed, graph, provider, script
):
    standin = request.getfixturevalue(provider or "anthropic")
    standin.script = slowly(script)
    with serving(make_settings(graph=graph or request.getfixturevalue("text_to_sql"))) as base_url:
        asyncio.run(reload_then_stop(base_url))


def memory_script(call: Call) -> Reply | None:
    """langmem's README conversation: the agent keeps a preference it is told, and searches for it when asked."""
    if "manage_memory" not in call.tools:
        return None
    asked = call.users[-1]
    if call.last_result is not None:
        if call.results[-1] == "manage_memory":
            return Reply(text="I'll remember that.")
        return Reply(text=f"You told me: {call.last_result}")
    if asked.startswith("Remember that "):
        return Reply(tool=("manage_memory", {"content": asked.removeprefix("Remember that "), "action": "create"}))
    return Reply(tool=("search_memory", {"query": asked}))


async def test_langmems_agent_keeps_its_memories_in_its_own_store_across_conversations(make_settings, anthropic):
    """Compiled with its own indexed store: what it keeps there in one conversation it finds in the next (its own
    store, not threadline's); its memory tools shown and kept; `ai` 4 reads it."""
    anthropic.script = memory_script
    async with running(make_settings(graph="langmem_readme:agent")) as client:
        first, second = new_conversation_id(), new_conversation_id()
        (kept,) = await converse(client, first, ["Remember that I prefer dark mode."])
        live = await converse(client, second, ["What are my lighting preferences?", "and my theme?"])
        history = await history_of(client, second)
        response = await client.post("/api/chat?protocol=data-stream", json=chat_body(second, "anything else?"))
    assert parts(kept, "tool-manage_memory")[0]["state"] == "output-available"
    (searched,) = parts(live[0], "tool-search_memory")
    assert "I prefer dark mode." in searched["output"] and "I prefer dark mode." in texts(live[0])
    assert [shown(message) for message in history[1::2]] == [shown(message) for message in live]
    assert "I prefer dark mode." in read_with_ai4(response.content)["message"]["content"]
    from langmem_readme import store  # the agent's own, in this process

    (memory,) = store.search(("memories",))
    assert memory.value["content"] == "I prefer dark mode."
