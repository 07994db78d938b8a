"""LangGraph's PostgreSQL store for agents' long-term memory, taking any JSON value as its in-memory store does.

`AsyncPostgresStore` keeps a value as a JSON object only; the in-memory store (and so `langgraph dev`) keeps
anything, and public agents rely on it: agents-from-scratch's memory variant keeps its preferences as strings.
Such a value is kept wrapped in an object of one reserved key and given back as it was put.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langgraph.store.base import Item, Op, PutOp, Result
from langgraph.store.postgres.aio import AsyncPostgresStore

WRAPPED = "__threadline_value__"


class AgentStore(AsyncPostgresStore):
    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        results = await super().abatch([_wrapped(op) for op in ops])
        for result in results:
            for item in result if isinstance(result, list) else [result]:
                if isinstance(item, Item) and isinstance(item.value, dict) and item.value.keys() == {WRAPPED}:
                    item.value = item.value[WRAPPED]
        return results


def _wrapped(op: Op) -> Op:
    if isinstance(op, PutOp) and op.value is not None and not isinstance(op.value, dict):
        value: Any = {WRAPPED: op.value}
        return op._replace(value=value)
    return op
