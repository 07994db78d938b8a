"""A LangChain `create_agent` agent behind threadline: the profile's model, the MCP servers' tools, and
middleware from LangChain itself.

    THREADLINE_GRAPH=examples/assistant.py:graph python3 tasks.py serve

Try "calculate (17 * 23) + 4": the calculator waits for your approval, and the page lets you approve,
decline, or change the expression first (HumanInTheLoopMiddleware's approve, reject and edit). Long
conversations are summarized (SummarizationMiddleware), and an answer makes at most the server's
number of model calls (ModelCallLimitMiddleware with CHAT_MAX_MODEL_CALLS).
"""

from langchain.agents import create_agent
from langchain.agents.middleware import (
    HumanInTheLoopMiddleware,
    InterruptOnConfig,
    ModelCallLimitMiddleware,
    SummarizationMiddleware,
)
from threadline.agent.context import AgentContext


def graph(context: AgentContext):
    """Called once per model profile: A/B comparisons and the profile picker work for this agent too."""
    asks = {
        tool.name: InterruptOnConfig(
            allowed_decisions=["approve", "reject"], description="Its tool server asks before every call."
        )
        for tool in context.tools
        if getattr(tool, "needs_approval", False)  # the MCP servers' own policy (MCP_SERVERS: requireApproval)
    }
    asks["calculator"] = InterruptOnConfig(
        allowed_decisions=["approve", "edit", "reject"],
        description="The calculator evaluates this expression on the server: check it, or change it first.",
    )
    return create_agent(
        context.model,
        list(context.tools),
        system_prompt=context.system_prompt,
        middleware=[
            SummarizationMiddleware(context.model, trigger=("messages", 40), keep=("messages", 20)),
            HumanInTheLoopMiddleware(interrupt_on=asks),
            ModelCallLimitMiddleware(run_limit=context.max_model_calls, exit_behavior="end"),
        ],
        context_schema=AgentContext,
    )
