"""The HTTP routes: threadline's own API and wires here, the seed contracts in `contracts`.

Each handler checks its request, declares what it needs (`ctx: Ctx`, who asks with the services, or `services`
alone; the visitor's `conversation`; http/dependencies.py) and hands the answer to the answer service; none
imports another as a library.
"""

__all__ = ["actions", "chat", "comparisons", "contracts", "conversations", "feedback", "files", "shares", "traces"]
