"""Everything threadline keeps, in PostgreSQL or process memory, assembled in one `Storage` (`stores`). Each store
is a protocol with its shared types in a module here, implemented in `postgres/` and `memory/` by a module of the
same name; `postgres/` also holds the rows through which processes share their running answers
(`running_answers`) and recordings (`recorded_events`). The modules: the tables'
ordered migrations (`migrations`) in their schema (`schema`), the checkpoint saver LangGraph writes through
(`saver`) and what keeps answering when the database is lost (`fallback`), the conversation list
(`conversation_list`), the files (`file_store`), the answers' traces (`traces`, documents shaped by
`trace_document`), the ratings (`feedback`), the A/B comparisons (`comparisons`), the read-only links (`shares`),
an anonymous visitor's conversations claimed by a user (`claims`), the agents' long-term memory (`agent_store`),
the embedded database (`embedded`), and how a conversation's id becomes its thread (`threads`)."""

__all__ = [
    "agent_store",
    "claims",
    "comparisons",
    "conversation_list",
    "embedded",
    "fallback",
    "feedback",
    "file_store",
    "memory",
    "migrations",
    "postgres",
    "saver",
    "schema",
    "shares",
    "stores",
    "threads",
    "trace_document",
    "traces",
]
