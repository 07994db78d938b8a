"""Two agents that say who they are and how many messages they were given, and a graph with no messages."""

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from typing_extensions import TypedDict


def speaker(name):
    def speak(state: MessagesState):
        return {"messages": [AIMessage(f"{name} here, after {len(state['messages'])} messages")]}

    builder = StateGraph(MessagesState)
    builder.add_node("speak", speak)
    builder.add_edge(START, "speak")
    return builder.compile(name=name)


class Counter(TypedDict):
    count: int


def count(state: Counter):
    return {"count": state["count"] + 1}


counting = StateGraph(Counter)
counting.add_node("count", count)
counting.add_edge(START, "count")

writer = speaker("writer")
critic = speaker("critic")
