"""One answer in flight, with no HTTP in sight.

An answer is a turn (`turn`) that runs the agent and turns its LangGraph stream into the canonical
events (`runner`; the events themselves are `threadline.events`, at the bottom, which every layer speaks);
`active` keeps one running answer per conversation across processes,
`recordings` keeps each answer's events so a reader can resume it, and `failures` says what went
wrong in words a person can act on. Beside the answers, `conversation_service` deletes and claims whole
conversations, once their running answer has stopped.
"""

__all__ = ["active", "conversation_service", "failures", "recordings", "runner", "turn"]
