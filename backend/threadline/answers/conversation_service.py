"""What happens to a whole conversation beside its answers: deleted with all that belongs to it (by its
visitor, or past its retention) and claimed by the user an anonymous visitor signs in as. Each waits for the
conversation's running answer first, in whichever process runs it, so nothing it saves comes back."""

from __future__ import annotations

from dataclasses import dataclass

from threadline.answers.active import ActiveTurns
from threadline.chores import hourly
from threadline.refusals import busy
from threadline.storage.claims import Claimed
from threadline.storage.fallback import FallbackCheckpointer
from threadline.storage.stores import Storage
from threadline.storage.threads import branch_of, thread_of


@dataclass(frozen=True)
class Retention:
    """Days a conversation may stay idle (CHAT_CONVERSATION_RETENTION_DAYS) and an anonymous visitor's
    (CHAT_ANONYMOUS_RETENTION_DAYS); 0 keeps them."""

    conversation_days: float = 0
    anonymous_days: float = 0


@dataclass(frozen=True)
class ConversationService:
    storage: Storage
    active: ActiveTurns
    retention: Retention = Retention()

    async def delete(self, client_id: str, conversation_id: str) -> bool:
        """Delete a visitor's conversation and all that belongs to it; False when they have none by that id.
        An answer still streaming is stopped first (in whichever process runs it) and its last writes are
        awaited, so nothing it saves can bring the conversation back."""
        storage, thread_id = self.storage, thread_of(client_id, conversation_id)
        await self.active.cancel(thread_id, client_id)
        if not await storage.conversations.delete(conversation_id, client_id):
            return False
        await storage.checkpointer.adelete_thread(thread_id)
        await storage.traces.delete_conversation(client_id, conversation_id)
        await storage.feedback.delete_conversation(client_id, conversation_id)
        await storage.shares.delete_conversation(client_id, conversation_id)
        await storage.files.delete_conversation(client_id, conversation_id)
        for comparison_id in await storage.comparisons.delete_conversation(client_id, conversation_id):
            for side in "AB":
                await storage.checkpointer.adelete_thread(branch_of(thread_id, comparison_id, side))
        return True

    async def keep_expiring(self) -> None:
        """Hourly, delete the conversations idle past their retention."""
        policies = [
            (days, anonymous_only)
            for days, anonymous_only in (
                (self.retention.conversation_days, False),
                (self.retention.anonymous_days, True),
            )
            if days > 0
        ]
        if policies:
            await hourly(
                lambda: self.expire(policies),
                "deleted %d conversations past their retention",
                "could not delete expired conversations; will retry",
            )

    async def expire(self, policies: list[tuple[float, bool]]) -> int:
        """Delete the conversations idle for longer than a policy's days; how many went."""
        expired = 0
        for days, anonymous_only in policies:
            while idle := await self.storage.conversations.idle(days, anonymous_only):
                deleted = [await self.delete(client, conversation) for client, conversation in idle]
                expired += sum(deleted)
                if not any(deleted):
                    break  # gone meanwhile (deleted by its visitor): the next batch would be the same
        return expired

    async def claim(self, anonymous_id: str, principal: str) -> Claimed:
        """Give a signed-in user the conversations of their anonymous identity (storage/claims.py), once no
        answer of that identity runs; this process forgets what it kept of their old threads."""
        if await self.active.running_answer(anonymous_id) is not None:
            raise busy()
        claimed = await self.storage.claims.claim(anonymous_id, principal)
        if isinstance(checkpointer := self.storage.checkpointer, FallbackCheckpointer):
            for conversation_id in claimed.conversations:
                await checkpointer.forget(thread_of(anonymous_id, conversation_id))
        return claimed
