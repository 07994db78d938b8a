"""Context compression (seed 003 CH-T7): a long conversation never sends the model more than its profile's
context limit, the summary is made once and reused, and the history keeps every message."""

from __future__ import annotations

import itertools

from helpers import chat, new_conversation_id, running, text_of
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from threadline.agent.compression import KEEP, SUMMARIZE, THRESHOLD, Compressor, tokens
from threadline.agent.graph import SUMMARIZING
from threadline.settings.profiles import Profile
from threadline_testing import standins

LIMIT = 4_000
TURNS = 120


def estimate(request: dict) -> int:
    """context.tokens() applied to the request as the provider received it."""
    return sum(
        4 + len(message["content"] if isinstance(message["content"], str) else "") // 4
        for message in request["messages"]
    )


def is_summary_request(request: dict) -> bool:
    return request["messages"][0]["content"] == SUMMARIZE


async def test_a_hundred_and_twenty_turns_fit_a_4000_token_context_and_keep_every_message(make_settings):
    standin = standins.start("openai")
    profile = Profile(
        id="small",
        provider="openai",
        model="gpt-standin",
        base_url=standin.base_url,
        api_key="sk-test",
        context_limit=LIMIT,
        default=True,
    )
    conversation_id = new_conversation_id()
    try:
        settings = make_settings(profiles=(profile,), rate_limit="100000/minute", api_rate_limit="100000/minute")
        summarizing_turns = 0
        async with running(settings) as client:
            for turn in range(1, TURNS + 1):
                text = f"turn {turn}: " + "tell me more about tea. " * 6
                _, _, chunks = await chat(client, conversation_id, text, streamMode="events")
                assert chunks[-1]["type"] == "finish", chunks[-1]
                statuses = [chunk["data"]["text"] for chunk in chunks if chunk["type"] == "data-status"]
                summarizing_turns += SUMMARIZING in statuses
                answer = text_of(chunks)
                assert answer.startswith(f"Echo: {text.strip()}") and answer.count("Echo:") == 1, (
                    "the summarizing call's words never reach the stream"
                )
            last = text_of(chunks)
            history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    finally:
        standin.stop()
    answers = [request for request in standin.requests if not is_summary_request(request)]
    summaries = [request for request in standin.requests if is_summary_request(request)]
    assert len(answers) == TURNS
    assert max(estimate(request) for request in answers) <= LIMIT, "never more than the context limit"
    assert max(estimate(request) for request in answers[-50:]) <= THRESHOLD * LIMIT + 200
    seen = int(last.rsplit("user messages seen: ", 1)[1].rstrip(")"))
    assert seen < 40, f"the last request carried {seen} user messages, not {TURNS}: older turns were summarized"
    assert 1 <= len(summaries) < TURNS / 5, "a summary is made once and reused for many turns"
    assert summarizing_turns == len(summaries), "events mode says so while it summarizes, and only then"
    systems = [request["messages"][0]["content"] for request in answers]
    assert any(a == b and "Summary of the earlier conversation" in a for a, b in itertools.pairwise(systems))
    assert len(history) == 2 * TURNS, "compression changes what the model sees, never the history"
    assert history[0]["parts"][0]["text"].startswith("turn 1: ")


def tail_start(messages: list, start: int) -> int:
    """The cut as seed 003 defines it: the oldest turn start whose whole tail fits in KEEP, the newest turn always."""
    starts = [index for index in range(start, len(messages)) if isinstance(messages[index], HumanMessage)]
    fitting = [index for index in starts[:-1] if tokens(messages[index:]) <= KEEP * LIMIT]
    cut = starts[-1] if starts else start
    while fitting and fitting[-1] == starts[starts.index(cut) - 1]:
        cut = fitting.pop()
    return cut


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3000), st.lists(st.integers(0, 3000), max_size=3)), min_size=1, max_size=30),
    st.integers(0, 5),
)
def test_the_verbatim_tail_starts_at_the_oldest_turn_that_fits(turns, start) -> None:
    """The cut, its tail counted turn by turn, is where counting each tail whole puts it."""
    said = [
        [HumanMessage("q" * question), *(AIMessage("a" * answer) for answer in answers)] for question, answers in turns
    ]
    messages = [message for turn in said for message in turn]
    start = min(start, len(messages) - 1)
    compressor = Compressor(model=None, limit=LIMIT)  # type: ignore[arg-type]
    assert compressor._cut(messages, start) == tail_start(messages, start)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=200),
            st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=200)}), max_size=3),
        ),
        max_size=10,
    )
)
def test_the_estimate_counts_what_the_model_is_sent(contents) -> None:
    """Four characters a token of each message's text (its text blocks, when it has blocks), four a message."""
    messages = [(HumanMessage if index % 2 else AIMessage)(content) for index, content in enumerate(contents)]
    assert tokens(messages) == sum(4 + len(message.text) // 4 for message in messages)
