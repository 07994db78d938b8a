"""The seed contracts' routes, each named after its seed document: the same answers on their wires."""

__all__ = ["seed_001", "seed_002", "seed_004"]
