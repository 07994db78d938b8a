"""One answer in flight, with no HTTP in sight.

An answer is a turn (`turn`) that runs the agent and turns its LangGraph stream into the canonical
events (`runner`, `events`); `active` keeps one running answer per conversation across processes,
`recordings` keeps each answer's events so a reader can resume it, and `failures` says what went
wrong in words a person can act on.
"""

__all__ = ["active", "events", "failures", "recordings", "runner", "turn"]
