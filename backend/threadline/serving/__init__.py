"""How a `threadline serve` process is tuned: its garbage collector, LangSmith's bookkeeping around create_agent's
hooks, and LangChain's callback dispatch (each module says why, and what it changes)."""

from __future__ import annotations


def tune_process() -> None:
    """Every tuning, once the app has started: the garbage collector last, so the heap it freezes is the whole of
    what start-up built."""
    from threadline.serving.gc_tuning import tune_for_serving
    from threadline.serving.langchain_dispatch import use_lean_dispatch
    from threadline.serving.langsmith_inline import run_langsmith_bookkeeping_inline

    run_langsmith_bookkeeping_inline()
    use_lean_dispatch()
    tune_for_serving()
