"""What answers: the built-in LangGraph graph and everything it decides with.

`graph` is the conversation graph; `models` and `profiles` choose the chat model (`demo_model` works
offline); `compression` shortens what the model sees of a long conversation, `suggestions` and
`actions` offer next steps, and `tool_inputs` checks a tool call before it runs. Which tool calls wait
for a person is decided here; what waits is conversation data (`conversations.approvals`).
"""

__all__ = ["actions", "compression", "demo_model", "graph", "models", "profiles", "suggestions", "tool_inputs"]
