"""langmem's README agent ("an agent that actively manages its own long-term memory"), as printed there but for
its store's `embed`: OpenAI's embeddings need tiktoken's vocabulary, downloaded from the network, so a test gives
the store a local embedding of the same dimensions (letter counts)."""

# Import core components (1)
from langgraph.prebuilt import create_react_agent
from langgraph.store.memory import InMemoryStore
from langmem import create_manage_memory_tool, create_search_memory_tool


def embed(texts: list[str]) -> list[list[float]]:  # replaced: "openai:text-embedding-3-small"
    return [[float(text.lower().count(chr(97 + i % 26))) for i in range(1536)] for text in texts]


# Set up storage (2)
store = InMemoryStore(
    index={
        "dims": 1536,
        "embed": embed,
    }
) 

# Create an agent with memory capabilities (3)
agent = create_react_agent(
    "anthropic:claude-3-5-sonnet-latest",
    tools=[
        # Memory tools use LangGraph's BaseStore for persistence (4)
        create_manage_memory_tool(namespace=("memories",)),
        create_search_memory_tool(namespace=("memories",)),
    ],
    store=store,
)
