"""Stand-in for the template's tools.py: `search` keeps its name, signature and its read of the runtime context
(`max_search_results`), and answers from a local list instead of Tavily's web search (no network in tests)."""

from typing import Any, Callable, List, Optional

from langgraph.runtime import get_runtime

from react_agent.context import Context

PAGES = [{"title": f"Result {n}", "url": f"https://example.org/{n}", "content": f"Page {n} about the query."} for n in range(20)]


async def search(query: str) -> Optional[dict[str, Any]]:
    """Search for general web results."""
    runtime = get_runtime(Context)
    return {"query": query, "results": PAGES[: runtime.context.max_search_results]}


TOOLS: List[Callable[..., Any]] = [search]
