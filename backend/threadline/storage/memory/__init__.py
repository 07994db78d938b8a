"""Every store in process memory (CHAT_MEMORY_BACKEND=memory), a module per store: each implements the
protocol of the storage/ module of the same name, as its PostgreSQL twin in storage/postgres/ does."""
