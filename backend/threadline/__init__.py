"""threadline: a LangGraph chat backend that speaks the AI SDK's streams."""
