"""threadline: a LangGraph chat backend that speaks the AI SDK's streams."""

__version__ = "0.1.0"
