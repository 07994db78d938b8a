"""What answers: the built-in LangGraph graph and everything it decides with.

`graph` is the conversation graph; `models` makes a profile's chat model (`demo_model` works offline;
the profiles themselves are settings: `settings.profiles`); `compression` shortens what the model sees of
a long conversation, `suggestions` and `actions` offer next steps, and `tool_inputs` checks a tool call
before it runs. Which tool calls wait for a person is decided here; what waits is conversation data
(`conversations.approvals`).
"""

__all__ = ["actions", "compression", "demo_model", "graph", "models", "suggestions", "tool_inputs"]
