"""A conversation as data: what its checkpoint holds (`state`), the `UIMessage` view a page reloads
(`history`), the ratings its answers get (`feedback`) and its A/B comparisons (`comparisons`)."""

__all__ = ["comparisons", "feedback", "history", "state"]
