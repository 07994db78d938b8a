"""deepagents' README quick start, as printed there: an `openai:` model, which deepagents runs on OpenAI's
Responses API. The README leaves `my_custom_tool` to the reader; this one looks up notes."""

from deepagents import create_deep_agent


def my_custom_tool(topic: str) -> str:
    """Look up notes on a topic."""
    return f"Notes on {topic}: it is a graph runtime."


agent = create_deep_agent(
    model="openai:gpt-5.5",
    tools=[my_custom_tool],
    system_prompt="You are a research assistant.",
)
