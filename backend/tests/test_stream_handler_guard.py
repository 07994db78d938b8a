"""answers/runner.py subclasses LangGraph's private `messages` handler (`langgraph.pregel._messages.
StreamMessagesHandler`, langgraph 1.2), overriding the methods below and inlining `on_llm_new_token`; pyproject pins
the minor release (`langgraph<1.3`), and this fails when an upgrade changes what the subclass relies on."""

from __future__ import annotations

import hashlib
import inspect

import pytest
from langgraph.pregel._messages import StreamMessagesHandler
from threadline.answers.runner import CallsAsTheyEnd

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
