"""threadline's built-in agent, written against the public interface a team's own agent uses.

    THREADLINE_GRAPH=examples/builtin.py:graph python3 tasks.py serve

It answers like the server without THREADLINE_GRAPH: the profile's model and system prompt, the MCP
servers' tools, approval where a tool server asks for it (MCP_SERVERS: requireApproval), and at most
CHAT_MAX_MODEL_CALLS model calls per answer. (The built-in graph itself also compresses long
conversations per profile and checks tool inputs before they run.)
"""

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware, InterruptOnConfig, ModelCallLimitMiddleware
from threadline.agent.context import AgentContext


def graph(context: AgentContext):
    asks = {
        tool.name: InterruptOnConfig(allowed_decisions=["approve", "reject"])
        for tool in context.tools
        if getattr(tool, "needs_approval", False)
    }
    return create_agent(
        context.model,
        list(context.tools),
        system_prompt=context.system_prompt,
        middleware=[
            HumanInTheLoopMiddleware(interrupt_on=asks),
            ModelCallLimitMiddleware(run_limit=context.max_model_calls, exit_behavior="end"),
        ],
        context_schema=AgentContext,
    )
