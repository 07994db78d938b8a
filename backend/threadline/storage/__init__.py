"""PostgreSQL plumbing: the tables' ordered migrations (`migrations`), the conversation list (`conversation_list`),
the files (`file_store`), the agents' long-term memory (`agent_store`), the embedded database (`embedded`), the
checkpoint saver LangGraph writes through (`saver`), what keeps answering when the database is lost (`fallback`),
and how a conversation's id becomes its thread (`threads`). The stores are assembled in conversations/stores.py."""

__all__ = ["agent_store", "conversation_list", "embedded", "fallback", "file_store", "migrations", "saver", "threads"]
