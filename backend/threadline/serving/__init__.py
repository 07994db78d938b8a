"""How a `threadline serve` process is tuned: its garbage collector, LangSmith's bookkeeping around create_agent's
hooks, and LangChain's callback dispatch (each module says why, and what it changes)."""
