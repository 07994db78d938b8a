"""deepagents' own quick start: `create_deep_agent` with a tool of one's own, its default model and its
built-in planning, file and sub-agent tools."""

from deepagents import create_deep_agent


def get_weather(city: str) -> str:
    """Get weather for a given city."""
    return f"It's always sunny in {city}!"


graph = create_deep_agent(tools=[get_weather], system_prompt="You are a helpful assistant")
