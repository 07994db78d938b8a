"""answers/runner.py subclasses LangGraph's private `messages` handler (`langgraph.pregel._messages.
StreamMessagesHandler`, langgraph 1.2), overriding the methods below and inlining `on_llm_new_token`; pyproject pins
the minor release (`langgraph<1.3`), and this fails when an upgrade changes what the subclass relies on."""

from __future__ import annotations

import hashlib
import inspect
from uuid import uuid4

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.pregel._messages import StreamMessagesHandler
from threadline.answers.runner import CallsAsTheyEnd
from threadline.answers.translator import TurnTranslator

RELIED_ON = {  # sha256 of each method's source in the release the subclass follows
    "__init__": "a12b344be29c8e09",
    "on_chat_model_start": "a6078157b3483c24",
    "on_chain_start": "e61b7a6542480d7d",
    "on_llm_new_token": "08a8c345ae2a97fe",  # inlined in CallsAsTheyEnd.on_llm_new_token
    "on_llm_end": "e2a3abac4d9e2e20",
    "on_llm_error": "1164d2e08976ad62",
    "_emit": "603388270ef735da",
}


@pytest.mark.parametrize("name", RELIED_ON)
def test_the_handler_methods_the_subclass_relies_on_are_unchanged(name):
    source = inspect.getsource(getattr(StreamMessagesHandler, name))
    assert hashlib.sha256(source.encode()).hexdigest()[:16] == RELIED_ON[name], (
        f"StreamMessagesHandler.{name} changed upstream: check answers/runner.py's CallsAsTheyEnd against it, "
        "then update its hash"
    )


def test_every_method_the_subclass_overrides_is_guarded():
    overridden = {name for name, value in vars(CallsAsTheyEnd).items() if inspect.isfunction(value)}
    assert {name for name in overridden if not name.startswith("__")} <= set(RELIED_ON)


messages = st.one_of(
    st.builds(HumanMessage, content=st.text(max_size=3), id=st.one_of(st.none(), st.text("ab", max_size=2))),
    st.builds(AIMessage, content=st.text(max_size=3), id=st.one_of(st.none(), st.text("ab", max_size=2))),
)
values = st.one_of(
    messages, st.lists(messages, max_size=4), st.lists(st.one_of(messages, st.text(max_size=2))), st.text()
)


@settings(deadline=None)  # a first example can be slow on a busy machine; none is timed
@given(st.dictionaries(st.sampled_from(["messages", "other", "more"]), values), st.booleans())
def test_a_node_start_marks_the_messages_it_is_given_as_langgraphs_handler_does(inputs, hidden):
    about = {"langgraph_node": "model", "langgraph_checkpoint_ns": "model:1"}
    theirs = StreamMessagesHandler(lambda _: None, subgraphs=True)
    ours = CallsAsTheyEnd(lambda _: None, TurnTranslator(False))
    for handler in (theirs, ours):
        handler.on_chain_start(
            {}, inputs, run_id=uuid4(), tags=["langsmith:hidden"] if hidden else [], metadata=about, name="model"
        )
    assert ours.seen == theirs.seen
    assert list(ours.metadata.values()) == list(theirs.metadata.values())
