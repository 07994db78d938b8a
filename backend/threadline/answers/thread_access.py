"""Who may do what with a conversation, when a langgraph.json's `auth` has `@auth.on` handlers for threads.

LangGraph's server asks those handlers before it creates, reads, updates, deletes, searches or runs on a thread,
and threadline asks them at the same moments about a conversation (its thread): `create` before a conversation's
first answer, `create_run` before every answer, `read`, `update` (a rename, a share, a version shown, a stop),
`delete`, and `search` for the list. A handler allows (None or True), refuses (False: 403, or its own
HTTPException), or returns a filter the conversation's metadata must match, else it is not found (404), as a
thread outside the filter is to LangGraph. The metadata is what the `create` handler wrote into `value["metadata"]`;
it is kept in threadline's store under the caller, so it moves with a claim like the rest of what they own.

These rules narrow threadline's own: a conversation stays its caller's, whatever a handler returns.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from langgraph.store.base import BaseStore, GetOp, Item

from threadline.refusals import Refused, not_found

log = logging.getLogger(__name__)

Action = Literal["create", "create_run", "read", "update", "delete", "search"]
# A handler's answer for one action on `threads` with its `value`: None to allow, else the filter to match (a
# refusal is raised as the handler's HTTP error).
Decide = Callable[[Action, dict[str, Any]], Awaitable[Mapping[str, Any] | None]]

NAMESPACE = ("threadline", "thread-metadata")
T = TypeVar("T")


def matches(metadata: Mapping[str, Any], rule: Mapping[str, Any]) -> bool:
    """LangGraph's filter: each key's value equal (`v` or `{"$eq": v}`), or held by the metadata's list
    (`{"$contains": v}`, or every one of a list of values)."""
    for key, wanted in rule.items():
        have = metadata.get(key)
        if not isinstance(wanted, Mapping):
            wanted = {"$eq": wanted}
        for operator, value in wanted.items():
            if operator == "$eq":
                ok = have == value
            elif operator == "$contains":
                values = value if isinstance(value, list) else [value]
                ok = isinstance(have, list) and all(item in have for item in values)
            else:  # refused, not let through: a rule that cannot be applied protects nothing
                log.error("the auth handler's filter has an operator threadline cannot apply: %r", operator)
                raise Refused("FORBIDDEN", "This conversation's access rule could not be applied.")
            if not ok:
                return False
    return True


@dataclass(frozen=True)
class ThreadAccess:
    """The handlers' decisions about one caller's conversations; without handlers everything is allowed."""

    decide: Decide | None = None
    store: BaseStore | None = None

    @property
    def ruled(self) -> bool:
        return self.decide is not None

    async def check(self, what: Action, client_id: str, conversation_id: str, **value: Any) -> None:
        """Refused (403, or not found) unless the handler for `what` allows it on this conversation; `value` is
        the rest of what LangGraph's server gives the handler."""
        if self.decide is None:
            return
        rule = await self.decide(what, {"thread_id": conversation_id, **value})
        if rule and not matches(await self._metadata(client_id, conversation_id), rule):
            raise not_found()

    async def start_run(self, client_id: str, conversation_id: str, new: bool, agent_id: str | None) -> None:
        """Before an answer: a new conversation's `create` (its metadata kept), then `create_run`."""
        if self.decide is None:
            return
        if new:
            value: dict[str, Any] = {"thread_id": conversation_id, "metadata": {}, "if_exists": "raise"}
            rule = await self.decide("create", value)
            metadata = value.get("metadata") or {}
            if rule and not matches(metadata, rule):
                raise not_found()
            assert self.store is not None, "rules come with the store that keeps their metadata"
            await self.store.aput((*NAMESPACE, client_id), conversation_id, dict(metadata))
        run: dict[str, Any] = {"assistant_id": agent_id, "metadata": {}, "kwargs": {}, "multitask_strategy": "reject"}
        await self.check("create_run", client_id, conversation_id, **run)

    async def visible(self, client_id: str, found: Sequence[T], id_of: Callable[[T], str], limit: int) -> list[T]:
        """Of a list of the caller's conversations, those the `search` handler's filter lets through."""
        if self.decide is None:
            return list(found)
        rule = await self.decide("search", {"metadata": {}, "values": {}, "status": None, "limit": limit, "offset": 0})
        if not rule or not found:
            return list(found)
        assert self.store is not None
        items = await self.store.abatch([GetOp((*NAMESPACE, client_id), id_of(each)) for each in found])
        values = [item.value if isinstance(item, Item) else {} for item in items]
        return [each for each, metadata in zip(found, values, strict=True) if matches(metadata, rule)]

    async def forget(self, client_id: str, conversation_id: str) -> None:
        """A deleted conversation's metadata goes with it."""
        if self.store is not None and self.decide is not None:
            await self.store.adelete((*NAMESPACE, client_id), conversation_id)

    async def _metadata(self, client_id: str, conversation_id: str) -> Mapping[str, Any]:
        assert self.store is not None
        item = await self.store.aget((*NAMESPACE, client_id), conversation_id)
        return item.value if item is not None else {}
