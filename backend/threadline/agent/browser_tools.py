"""Browser tools: tools the page declares with its request and runs itself (conversations/browser_calls.py).

`BrowserTools` is LangChain 1.x middleware, the way its docs add tools at run time: `wrap_model_call` offers the
run's browser tools to the model beside the agent's own, and `wrap_tool_call` answers a call of one with what the
page sends back, after an interrupt that ends the answer with the call open. The built-in agent has it; a team's
`create_agent` takes browser tools once it lists it in its middleware:

    create_agent(model, tools, middleware=[BrowserTools()])

The run's tools come in the run's config (`configurable`), so they belong to the page that sent them and are
never checkpointed. The middleware's private state key tells threadline that an agent takes them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import PrivateStateAttr
from langgraph.config import get_config
from langgraph.types import interrupt

from threadline.conversations import browser_calls

BROWSER_TOOLS = "threadline_browser_tools"  # the run config's key for them, and the marking state key


class BrowserToolsState(AgentState[Any]):
    """Never written: its key in an agent's state says the agent takes browser tools."""

    threadline_browser_tools: NotRequired[Annotated[list[str], PrivateStateAttr]]


def run_tools() -> Sequence[Mapping[str, Any]]:
    """The run's browser tools, as the request declared them: `{name, description, parameters}` each."""
    return get_config().get("configurable", {}).get(BROWSER_TOOLS) or ()


def as_function(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A browser tool in OpenAI's function format, which every LangChain chat model's `bind_tools` reads."""
    parameters = tool.get("parameters") or {"type": "object", "properties": {}}
    function = {"name": tool["name"], "description": tool.get("description", ""), "parameters": parameters}
    return {"type": "function", "function": function}


def takes_browser_tools(agent: Any) -> bool:
    """Whether a compiled agent has this middleware (its state has the marking key)."""
    return BROWSER_TOOLS in getattr(agent, "channels", {})


class BrowserTools(AgentMiddleware[BrowserToolsState, Any]):
    """The run's browser tools offered to the model; a call of one waits for the page and answers with its output."""

    state_schema = BrowserToolsState

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> ModelResponse[Any]:
        # A tool named without a description only answers a call that waits (answers/service.py): not offered.
        if offered := [as_function(tool) for tool in run_tools() if "description" in tool]:
            request = request.override(tools=[*request.tools, *offered])
        return await handler(request)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        call = request.tool_call
        if request.tool is None and any(tool["name"] == call["name"] for tool in run_tools()):
            # Ends the answer with the call open; resumed, the page's output (conversations/browser_calls.py).
            answer: browser_calls.BrowserOutput = interrupt(browser_calls.request(call))
            return browser_calls.result(call, answer)
        return await handler(request)
