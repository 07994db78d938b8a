"""A hand-written LangGraph `StateGraph` behind threadline: it asks the person a question, reports progress
while it looks things up in a subgraph, and answers with the profile's model.

    THREADLINE_GRAPH=examples/research.py:graph python3 tasks.py serve

Send "research tide pools": the agent asks which aspect you care about (a plain `interrupt()`; the page
shows the question with a reply box), then its `retrieve` subgraph reports each source it reads through
`get_stream_writer()` (shown as `data-progress` parts) and keeps them in the graph's own `sources` state,
and the `answer` node streams the reply. Anything else is answered directly.
"""

import operator
from typing import Annotated

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from threadline.agent.context import AgentContext

LIBRARY = {
    "ecology": ["Rock pools as nurseries", "Who eats whom at low tide"],
    "geology": ["How waves carve rock basins", "Sandstone, granite and the shape of pools"],
    "safety": ["Tide tables for visitors", "Slippery algae and how to walk on it"],
}


class ResearchState(MessagesState):
    topic: str
    aspect: str
    sources: Annotated[list[str], operator.add]  # every source read in this conversation, kept across turns


def clarify(state: ResearchState) -> dict:
    """Ask which aspect matters before looking anything up: the answer comes back as `interrupt`'s value."""
    question = state["messages"][-1].text
    topic = question.lower().removeprefix("research").strip() or "that"
    aspect = interrupt({"question": f"Which aspect of {topic} should I look into?", "options": sorted(LIBRARY)})
    return {"topic": topic, "aspect": str(aspect).strip().lower()}


def read_sources(state: ResearchState) -> dict:
    write = get_stream_writer()
    titles = LIBRARY.get(state["aspect"], [f"General notes on {state['topic']}"])
    for index, title in enumerate(titles, start=1):
        write({"name": "progress", "id": "retrieval", "data": {"done": index, "of": len(titles), "source": title}})
    return {"sources": titles}


retrieve = StateGraph(ResearchState)
retrieve.add_node("read_sources", read_sources)
retrieve.add_edge(START, "read_sources")
retrieve.add_edge("read_sources", END)


async def answer(state: ResearchState, runtime: Runtime[AgentContext]) -> dict:
    context = runtime.context
    found = state.get("sources") or []
    notes = f"Sources read so far: {'; '.join(found)}." if found else ""
    prompt = [SystemMessage(f"{context.system_prompt}\n{notes}".strip()), *state["messages"]]
    if state.get("aspect") and state["messages"][-1].type == "human" and found:
        prompt.append(HumanMessage(f"Summarize what the sources say about {state['aspect']}."))
    return {"messages": [await context.model.ainvoke(prompt)]}


def route(state: ResearchState) -> str:
    return "clarify" if state["messages"][-1].text.lower().startswith("research") else "answer"


builder = StateGraph(ResearchState, context_schema=AgentContext)
builder.add_node("clarify", clarify)
builder.add_node("retrieve", retrieve.compile())
builder.add_node("answer", answer)
builder.add_conditional_edges(START, route, ["clarify", "answer"])
builder.add_edge("clarify", "retrieve")
builder.add_edge("retrieve", "answer")
builder.add_edge("answer", END)
graph = builder
