"""A conversation as data: what its checkpoint holds (`state`), how an answer that did not end on its
own is closed in it (`closing`), the tool calls that wait for a person's approval (`approvals`), the
`UIMessage` view a page reloads (`history`), the ratings its answers get (`feedback`) and its A/B
comparisons (`comparisons`)."""

__all__ = ["approvals", "closing", "comparisons", "feedback", "history", "state"]
