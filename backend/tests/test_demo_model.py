"""The demo model's usage: the prompt's tokens counted as its streamed tokens are cut (one per run of non-space)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from threadline.agent.demo_model import _TOKEN, DemoChatModel, _token_count

# Letters, digits and every kind of space Python knows, the rare ones included.
texts = st.text(st.sampled_from("ab1é\u4e2d \t\n\r\x0b\x0c\x1c\x85\xa0\u2003\u2028\u3000"), max_size=40)


@settings(deadline=None)  # a first example can be slow on a busy machine; none is timed
@given(texts)
def test_a_messages_tokens_are_the_runs_the_streamed_tokens_are_cut_into(text):
    for message in (HumanMessage(content=text), AIMessage(content=[{"type": "text", "text": text}])):
        assert _token_count(message) == len(_TOKEN.findall(message.text))


def test_the_usage_counts_the_whole_prompt():
    model = DemoChatModel()
    history = [HumanMessage(content="count to 3"), AIMessage(content="1 2 3"), HumanMessage(content="count to 2")]
    usage = model.invoke(history).usage_metadata
    assert usage is not None
    assert usage["input_tokens"] == 3 + 3 + 3
    assert usage["output_tokens"] == len(_TOKEN.findall(model.invoke(history[-1:]).text))


def test_tools_are_bound_by_the_names_a_provider_is_told():
    @tool
    def lookup(query: str) -> str:
        """Look something up."""
        return query

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    page_tool = {"type": "function", "function": {"name": "read_page", "description": "The page.", "parameters": {}}}
    tools = [lookup, add, page_tool]
    bound = DemoChatModel().bind_tools(tools)
    assert bound.kwargs["tool_names"] == [convert_to_openai_tool(t)["function"]["name"] for t in tools]  # type: ignore[attr-defined]
