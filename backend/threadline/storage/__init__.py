"""PostgreSQL plumbing: every store in one `Storage` (`database`), the tables' ordered migrations
(`migrations`), the conversation list (`conversation_list`), the embedded database (`embedded`), the
checkpoint saver LangGraph writes through (`saver`), and what keeps answering when the database is lost
(`fallback`)."""

__all__ = ["conversation_list", "database", "embedded", "fallback", "migrations", "saver"]
