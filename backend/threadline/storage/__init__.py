"""PostgreSQL plumbing: the tables, their migrations and the embedded database (`database`), the
checkpoint saver LangGraph writes through (`saver`), and what keeps answering when the database is
lost (`fallback`)."""

__all__ = ["database", "fallback", "saver"]
