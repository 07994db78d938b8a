"""Every store in PostgreSQL, a module per store: each implements the protocol of the storage/ module of the
same name, as its in-memory twin in storage/memory/ does."""
