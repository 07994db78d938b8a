"""Answers for every route and wire: start, compare, regenerate, resume after approval, replay and stop.

A route checks its request and picks its wire; everything else about an answer is decided here, from one
`AnswerOptions`: the profile that answers, what happens to an answer already running, whether its stream is
recorded for a reader who comes back, and whether it goes on when its reader leaves. Refusals carry a code
(threadline.refusals); the HTTP edge gives each its status.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any

import msgspec
from langchain_core.messages import HumanMessage

from threadline import events as ev
from threadline.agent.attachments import kind_of
from threadline.agent.graph import TurnRequest
from threadline.agent.graphs import BUILT_IN, GraphSwitch
from threadline.agent.titles import title_for
from threadline.answers.active import ActiveTurns
from threadline.answers.options import AnswerOptions, NewMessage, new_id
from threadline.answers.recordings import Batches, Recordings
from threadline.answers.thread_access import Action, ThreadAccess
from threadline.answers.turn import Stop, Timeouts, Turn, TurnSetup
from threadline.conversations import approvals, versions
from threadline.conversations.approvals import SUPERSEDED, ApprovalResponse
from threadline.conversations.attachments import CheckedFile
from threadline.conversations.browser_calls import BrowserOutput
from threadline.conversations.closing import decline_waiting, roll_back
from threadline.conversations.state import (
    Conversation,
    answer_messages,
    answer_text,
    copy_conversation,
    load,
    replace_answer,
)
from threadline.observability.answers import Observability
from threadline.refusals import Refused, invalid, not_found
from threadline.settings.answers import AnswerSettings, MultitaskStrategy
from threadline.settings.profiles import Profile
from threadline.storage.comparisons import ComparedAnswer, Comparison, Side, kept_answer
from threadline.storage.conversation_list import ConversationSummary, title_from
from threadline.storage.stores import Storage
from threadline.storage.threads import branch_of, thread_of

log = logging.getLogger(__name__)

VOTE_ROUNDS = 5  # votes arriving at once: each round puts the latest preference's answer in place
SECOND_ANSWER_KEPT = 120.0  # seconds an unread second answer's stream waits for its reader after it ended


@dataclass
class AnswerService:
    settings: AnswerSettings
    graphs: GraphSwitch
    storage: Storage
    active: ActiveTurns
    recordings: Recordings
    observability: Observability
    # The second answers of A/B comparisons, by comparison id, until their stream is read.
    second_answers: dict[str, Turn] = field(default_factory=dict)
    chores: set[asyncio.Task[None]] = field(default_factory=set)  # work an answer leaves behind, kept alive
    access: ThreadAccess = field(default_factory=ThreadAccess)  # a langgraph.json's auth handlers, when it has any

    @property
    def several_profiles(self) -> bool:
        return len(self.graphs.profiles) > 1

    async def owned(self, client_id: str, conversation_id: str, action: Action = "read") -> ConversationSummary:
        """The visitor's conversation by this id, for `action` (what a langgraph.json's auth handlers are asked);
        another's is not found, exactly like a missing one."""
        conversation = await self.storage.conversations.get(conversation_id, client_id)
        if conversation is None:
            raise not_found()
        await self.access.check(action, client_id, conversation_id)
        return conversation

    async def start(self, client_id: str, conversation_id: str, message: NewMessage, options: AnswerOptions) -> Turn:
        """Start one answer in the visitor's conversation, on the profile `profile_for` chooses. Refused when
        the visitor already has one running, when the conversation's A/B comparison waits for a vote, or when
        a storage limit is reached."""
        profile = await self.profile_for(client_id, conversation_id, options.profile_id)
        options = await self._with_agent(options, client_id, conversation_id)
        if self.access.ruled:  # a langgraph.json's auth handlers are asked before the conversation is made or run
            new = await self.storage.conversations.get(conversation_id, client_id) is None
            await self.access.start_run(client_id, conversation_id, new, options.agent_id)
        if self.several_profiles and not options.comparison_id:  # a comparison needs two profiles
            await self._refuse_while_unvoted(client_id, conversation_id)
        thread_id = thread_of(client_id, conversation_id)
        if options.strategy != "reject":
            await self._make_room(thread_id, client_id, options.strategy)
        turn = self._turn(thread_id, conversation_id, client_id, message, profile, options)
        new_files = tuple(file for file in message.files if isinstance(file, CheckedFile))
        new_turn = not (options.regenerate or options.edit)
        await self._begin(
            turn, self._at_once(options), new_turn=new_turn, ids=(profile.id, options.agent_id), new_files=new_files
        )
        if self.several_profiles:
            # The conversation moves on: no vote can change the continuation of its earlier comparisons any
            # more, so the answers they kept for that go (their texts stay in the records).
            self.keep(self._settle(client_id, conversation_id))
        return turn

    async def regenerate(
        self, client_id: str, conversation_id: str, options: AnswerOptions, answer_id: str | None = None
    ) -> Turn:
        """Answer a question again: the one the answer by `answer_id` answers, else the last. The new answer
        is shown; the one it replaces is kept as a version (with whatever followed it)."""
        await self.owned(client_id, conversation_id)
        conversation = await load(self.graphs.current, thread_of(client_id, conversation_id))
        question_id = conversation.question_answered_by(answer_id) if answer_id else None
        question = next((m for m in conversation.messages if m.id == question_id), None) or conversation.last_question()
        if question is None:
            raise not_found()
        message = NewMessage(question.text, question.id or new_id())
        return await self.start(client_id, conversation_id, message, replace(options, regenerate=True))

    async def edit(self, client_id: str, conversation_id: str, message: NewMessage, options: AnswerOptions) -> Turn:
        """Answer `message` in place of the user message with its id; that message and everything after it
        are kept as a version."""
        await self.owned(client_id, conversation_id)
        conversation = await load(self.graphs.current, thread_of(client_id, conversation_id))
        questions = [m for m in conversation.messages if isinstance(m, HumanMessage)]
        if not any(m.id == message.id for m in questions):
            raise not_found("Message")
        turn = await self.start(client_id, conversation_id, message, replace(options, edit=True))
        if questions[0].id == message.id and message.text:  # a title taken from the first message follows it
            first = title_from(questions[0].text)
            await self.storage.conversations.name(conversation_id, client_id, title_from(message.text), first)
        return turn

    async def show_version(self, client_id: str, conversation_id: str, message_id: str, number: int) -> None:
        """Show version `number` (from 1) of a message with versions, and the branch that goes on from it."""
        await self.owned(client_id, conversation_id, "update")
        thread_id = thread_of(client_id, conversation_id)
        if await self.active.answer_running_in(thread_id) is not None:
            raise Refused("CONFLICT", "An answer is streaming in this conversation: stop it or let it finish first.")
        conversation = await load(self.graphs.current, thread_id)
        if conversation.waits:
            raise Refused("CONFLICT", "An answer waits for the person here: answer it or stop it first.")
        await versions.show_version(self.graphs.current, conversation, message_id, number)

    async def answer_approvals(
        self,
        client_id: str,
        conversation_id: str,
        responses: dict[str, tuple[str, ApprovalResponse]],
        options: AnswerOptions,
    ) -> Turn:
        """Resume the answer that waits for the person's approvals (by approval id: the tool call id and the
        response), once they are checked against what waits; it goes on as the same assistant message."""
        await self.owned(client_id, conversation_id, "create_run")  # the answer goes on: a run
        conversation = await load(self.graphs.current, thread_of(client_id, conversation_id))
        try:
            resume = approvals.check(conversation.approvals, responses, self._input_problem)
        except approvals.ApprovalError as error:
            raise Refused("CONFLICT" if error.conflict else "VALIDATION_ERROR", str(error)) from None
        declined = [tool_call_id for tool_call_id, response in responses.values() if not response["approved"]]
        return await self._resume(
            conversation, conversation_id, client_id, resume, {"declined": tuple(declined)}, options
        )

    def _input_problem(self, tool_name: str, value: Any) -> str | None:
        """What is wrong with a changed input for one of the tools; None for a tool not known here."""
        info = self.graphs.tools.get(tool_name)
        return info.edit_problem(value) if info is not None else None

    async def answer_question(
        self, client_id: str, conversation_id: str, interrupt_id: str, value: Any, options: AnswerOptions
    ) -> Turn:
        """Resume the answer that waits for the person's answer to the agent's question (`interrupt(value)`)."""
        await self.owned(client_id, conversation_id, "create_run")  # the answer goes on: a run
        conversation = await load(self.graphs.current, thread_of(client_id, conversation_id))
        asked = next((question for question in conversation.questions if question.id == interrupt_id), None)
        if asked is None:
            raise Refused("CONFLICT", "No question of the agent waits for an answer by this id (was it answered?)")
        question = conversation.last_question()
        record = conversation.records.get(question.id or "", {}) if question is not None else {}
        after = conversation.messages[-1].id if conversation.messages else None  # where it was asked
        reply = {"id": interrupt_id, "data": asked.part_data | {"reply": ev.plain(value)}, "after": after}
        carried = {"replied": (*record.get("replied", []), reply)}
        return await self._resume(conversation, conversation_id, client_id, {interrupt_id: value}, carried, options)

    async def answer_browser_calls(
        self, client_id: str, conversation_id: str, outputs: dict[str, BrowserOutput], options: AnswerOptions
    ) -> Turn:
        """Resume the answer that waits for the page to run its browser tools' calls, with their outputs (by tool
        call id; the outputs of the answer's other calls, which the page sends back with them, are not read): every
        call that waits must be answered (conversations/browser_calls.py)."""
        await self.owned(client_id, conversation_id, "create_run")  # the answer goes on: a run
        conversation = await load(self.graphs.current, thread_of(client_id, conversation_id))
        waiting = {call.tool_call_id: call for call in conversation.browser_calls}
        if not waiting:
            raise Refused("CONFLICT", "No tool call waits for the page's output here (was it already answered?)")
        if missing := sorted(set(waiting) - set(outputs)):
            raise invalid("messages", f"every waiting tool call needs its output; missing: {', '.join(missing)}")
        # The calls are run by the tools the request names: a page that did not send them again still answers.
        sent = {tool["name"] for tool in options.browser_tools}
        named = [{"name": call.tool_name} for call in waiting.values() if call.tool_name not in sent]
        options = replace(options, browser_tools=(*options.browser_tools, *named))
        resume = {call.interrupt_id: outputs[call_id] for call_id, call in waiting.items()}
        return await self._resume(conversation, conversation_id, client_id, resume, {}, options)

    async def _resume(
        self,
        conversation: Conversation,
        conversation_id: str,
        client_id: str,
        resume: dict[str, Any],
        carried: dict[str, Any],
        options: AnswerOptions,
    ) -> Turn:
        """The answer that waits goes on as the same assistant message; `carried` goes with its request (the calls
        the person declined, the questions they answered)."""
        question = conversation.last_question()
        assert question is not None and question.id, "what waits, waits in a turn, which has a question"
        record = conversation.records.get(question.id, {})
        profile = self.graphs.profiles.get(record.get("profile", "")) or self.graphs.default
        message = NewMessage(question.text, question.id, record.get("assistant_id") or new_id())
        options = replace(await self._with_agent(options, client_id, conversation_id), resumable=True)
        turn = self._turn(conversation.thread_id, conversation_id, client_id, message, profile, options, resume=resume)
        turn.request = msgspec.structs.replace(turn.request, **carried)
        turn.translator.began_after = conversation.messages[-1].id if conversation.messages else None
        await self._begin(turn, self._at_once(options), new_turn=False)
        return turn

    async def stop(self, client_id: str, conversation_id: str) -> None:
        """Stop the answer running (or waiting for approval) in the visitor's conversation, even before the
        conversation is recorded; not found, or a conflict when none runs. The answer is looked for again once
        the conversation is found: it may have started while the stop was on its way."""
        thread_id = thread_of(client_id, conversation_id)
        await self.access.check("update", client_id, conversation_id, action="interrupt")
        if await self.active.cancel(thread_id, client_id):
            return
        await self.owned(client_id, conversation_id)
        if await self.active.cancel(thread_id, client_id):
            return
        if await decline_waiting(self.graphs.current, thread_id):
            return
        raise Refused("CONFLICT", "No answer is streaming in this conversation: it has already finished.")

    async def replay(self, client_id: str, conversation_id: str) -> Batches | None:
        """The running answer's events from its first, then live; None when none runs."""
        await self.owned(client_id, conversation_id)
        return await self.recordings.resume(thread_of(client_id, conversation_id))

    def comparison_pair(self, requested: list[str] | None) -> tuple[Profile, Profile] | None:
        """The two profiles a new message is compared on: the request's, else CHAT_AB_PROFILES; None for none."""
        ids = requested or self.settings.ab_profiles
        if not ids:
            return None
        if len(ids) != 2 or ids[0] == ids[1]:
            raise invalid("compareProfiles", "name two different profiles")
        first, second = (self.graphs.profiles.get(profile_id) for profile_id in ids)
        if first is None or second is None:
            raise not_found("Profile")
        return first, second

    async def compare(
        self,
        client_id: str,
        conversation_id: str,
        message: NewMessage,
        pair: tuple[Profile, Profile],
        options: AnswerOptions,
    ) -> Turn:
        """Answer one message twice, on profile A in the conversation and on profile B on a branch forked from
        the same state, so neither sees the other (storage/comparisons.py). Returns A, which the
        response carries; B is read from GET /api/comparisons/{id}/stream."""
        comparison_id = new_id()
        thread_id = thread_of(client_id, conversation_id)
        await self._refuse_while_unvoted(client_id, conversation_id)
        await self.storage.conversations.touch(conversation_id, client_id, message.text)  # B counts as a turn too
        branch = branch_of(thread_id, comparison_id, "B")
        await copy_conversation(self.graphs.current, thread_id, branch)
        options = replace(
            await self._with_agent(options, client_id, conversation_id), comparison_id=comparison_id, resumable=True
        )
        try:
            first = await self.start(client_id, conversation_id, message, replace(options, profile_id=pair[0].id))
        except BaseException:
            await self.storage.checkpointer.adelete_thread(branch)
            raise
        message_b = replace(message, answer_id=new_id())
        second = self._turn(branch, conversation_id, client_id, message_b, pair[1], replace(options, resumable=False))
        comparison = Comparison(
            id=comparison_id,
            conversation_id=conversation_id,
            user_message_id=message.id,
            created_at=datetime.now(UTC),
            a=compared(first.request),
            b=compared(second.request),
        )
        try:
            await self.storage.comparisons.add(client_id, comparison)
        except BaseException:
            first.stop(Stop.CANCELLED)
            raise
        self.active.begin_branch(second)
        self.second_answers[comparison_id] = second
        self.keep(self._keep_answer(comparison_id, "A", first))
        self.keep(self._keep_answer(comparison_id, "B", second))
        return first

    async def follow_vote(self, client_id: str, comparison: Comparison) -> Side:
        """Make the conversation go on with the answer the comparison's preference chooses, while the compared
        message is still its last; which answer it goes on with. Votes may arrive at once, in several
        processes: after each change the preference is read again, so the conversation ends up with the
        latest vote's."""
        thread_id = thread_of(client_id, comparison.conversation_id)
        store = self.storage.comparisons
        for _ in range(VOTE_ROUNDS):
            conversation = await load(self.graphs.current, thread_id)
            question = conversation.last_question()
            if question is None or question.id != comparison.user_message_id:  # moved on: the continuation stays
                return "A" if conversation.question_answered_by(comparison.a.message_id) else "B"
            chosen = comparison.chosen
            if conversation.records.get(question.id, {}).get("assistant_id") != comparison.answer(chosen).message_id:
                kept = await store.kept(client_id, comparison.id, chosen) or await self._kept_on_branch(
                    thread_id, comparison, chosen
                )
                if kept is None:
                    raise Refused("CONFLICT", "That answer was not kept: it cannot become the conversation's.")
                try:
                    await replace_answer(self.graphs.current, conversation, question.id, kept)
                except ValueError:  # another vote changed the answer meanwhile: look again
                    continue
            latest = await store.get(client_id, comparison.id)
            if latest is None or latest.chosen == chosen:
                return chosen
            comparison = latest
        return comparison.chosen

    async def _kept_on_branch(self, thread_id: str, comparison: Comparison, side: Side) -> dict[str, Any] | None:
        """A comparison made before answers were kept in it has its answers on branches of the conversation."""
        branch = await load(self.graphs.current, branch_of(thread_id, comparison.id, side))
        question, messages = answer_messages(branch, comparison.answer(side).message_id) or ("", [])
        return kept_answer(messages, branch.records[question]) if question else None

    async def profile_for(self, client_id: str, conversation_id: str, requested: str | None) -> Profile:
        """The profile asked for (not found when there is none by that id), else the one the conversation went
        on with, else the default. With a single profile, nothing is read."""
        if requested is not None:
            if (profile := self.graphs.profiles.get(requested)) is None:
                raise not_found("Profile")
            return profile
        if self.several_profiles:
            row = await self.storage.conversations.get(conversation_id, client_id)
            if row is not None and row.profile_id in self.graphs.profiles:
                return self.graphs.profiles[row.profile_id]
        return self.graphs.default

    async def agent_for(self, client_id: str, conversation_id: str, requested: str | None) -> str:
        """The agent a message in this conversation goes to: the one it started with, else the one asked for,
        else the default. An unknown id is invalid; asking a started conversation for another agent is a
        conflict. With a single agent, nothing is read."""
        agents = list(self.graphs.agents) or [BUILT_IN]
        if requested is not None and requested not in agents:
            raise invalid("agent", f"no agent {requested!r}; GET /api/agents lists them ({', '.join(agents)})")
        if len(agents) == 1:
            return self.graphs.default_agent
        row = await self.storage.conversations.get(conversation_id, client_id)
        kept = row.agent_id if row is not None and row.agent_id in agents else None
        if kept is not None and requested not in (None, kept):
            raise Refused("CONFLICT", f"This conversation goes on with agent {kept!r}: start a new one for another.")
        return kept or requested or self.graphs.default_agent

    async def _with_agent(self, options: AnswerOptions, client_id: str, conversation_id: str) -> AnswerOptions:
        """`options` with the conversation's agent, when the route has not chosen it already."""
        if options.agent_id is not None:
            return options
        return replace(options, agent_id=await self.agent_for(client_id, conversation_id, None))

    def keep(self, chore: Coroutine[Any, Any, None]) -> None:
        """Run work an answer leaves behind to its end, awaited at shutdown."""
        task = asyncio.create_task(chore)
        self.chores.add(task)
        task.add_done_callback(self.chores.discard)

    def _turn(
        self,
        thread_id: str,
        conversation_id: str,
        client_id: str,
        message: NewMessage,
        profile: Profile,
        options: AnswerOptions,
        resume: dict[str, Any] | None = None,
    ) -> Turn:
        if unreadable := {kind_of(file["media_type"]) for file in message.references} - profile.reads:
            kinds = " or ".join(sorted(unreadable))
            raise invalid("messages", f"the model of profile {profile.id!r} cannot read {kinds} files")
        names = [tool["name"] for tool in options.browser_tools]
        if names and (problem := self.graphs.browser_tools_problem(names, options.agent_id)):
            raise invalid("tools", problem)
        request = turn_request(message, profile, options, resume)
        resumable = options.resumable and self.settings.resumable
        on_disconnect = options.on_disconnect or self.settings.on_disconnect
        setup = TurnSetup(
            options.stream_mode,
            Timeouts.of(self.settings, options.agent_id),
            self.observability,
            keep_failed_answer=options.keep_failed_answer,
            tools=self.graphs.tools,
            recording=self.recordings.start(thread_id, message.answer_id) if resumable else None,
            continue_on_disconnect=resumable and on_disconnect == "continue",
            context=self.graphs.context_for(profile.id, client_id, conversation_id, options.context),
            hosting=self.graphs.hosting_of(options.agent_id),
        )
        return Turn(self.graphs.of(profile.id, options.agent_id), thread_id, conversation_id, client_id, request, setup)

    def _at_once(self, options: AnswerOptions) -> int:
        return options.at_once or self.settings.answers_per_visitor

    async def _begin(
        self,
        turn: Turn,
        at_once: int,
        *,
        new_turn: bool,
        ids: tuple[str | None, str | None] = (None, None),
        new_files: tuple[CheckedFile, ...] = (),
    ) -> None:
        """Claim the visitor's one running answer, record it for every process, then the turn in its
        conversation, store the message's new files, then start it. When any of that is refused, the claim is
        released and a conversation this turn created is removed again: a refused message stores nothing.
        The running answer is recorded before its conversation is written, so a claim of the visitor's
        conversations (storage/claims.py) either finds it and is refused, or ends before it."""
        conversations = self.storage.conversations
        self.active.claim(turn, at_once)
        files = turn.request.files
        title = turn.request.text or (files[0]["filename"] if files else "")
        # An edit or a regeneration keeps what it replaces as a version: it counts toward CHAT_MAX_TURNS too.
        counted = new_turn or turn.request.regenerate or turn.request.edit
        created = False
        try:
            profile_id, agent_id = ids
            conversation = (turn.conversation_id, turn.client_id, title)
            along = conversations.along(*conversation, new_turn=counted, profile_id=profile_id, agent_id=agent_id)
            turn.read_ahead = self.storage.read_ahead(turn.thread_id)  # read with the rows, for the run
            written = await self.active.record(turn, at_once, along)  # one round trip
            if written is None:  # ... unless it could not go
                written = await conversations.touch(
                    *conversation, new_turn=counted, profile_id=profile_id, agent_id=agent_id
                )
            created = written
            if new_turn and not created and not self.graphs.hosting_of(agent_id).input_declines_waiting:
                # What a hosted agent left waiting is declined by the new message, and saved (a new
                # conversation has nothing waiting: no read). The run reads what that saved.
                turn.read_ahead = None
                await decline_waiting(turn.graph, turn.thread_id, SUPERSEDED)
            await self._store(turn.client_id, new_files)
        except BaseException:
            await self.active.release(turn)
            if created:
                await conversations.delete(turn.conversation_id, turn.client_id)
            raise
        if files:  # the conversation now uses them: they go when it goes
            await self.storage.files.use(turn.client_id, [file["id"] for file in files], turn.conversation_id)
        if created and self.settings.generated_titles and turn.request.text:
            turn.naming = asyncio.create_task(self._name(turn, title_from(title)))
        self.active.launch(turn)
        assert turn.task is not None, "launched"
        turn.task.add_done_callback(partial(self._remember_words, turn, new_turn or turn.request.edit))

    async def _store(self, owner: str, files: tuple[CheckedFile, ...]) -> None:
        for file in files:
            await self.storage.files.save(owner, file.data, file.media_type, file.filename)

    async def _name(self, turn: Turn, first_title: str) -> str | None:
        """A new conversation's title, written by its model from the first message and stored, unless the
        person renamed the conversation meanwhile."""
        title = await title_for(self.graphs.models[turn.request.profile], turn.request.text)
        if title is None:
            return None
        try:
            named = await self.storage.conversations.name(turn.conversation_id, turn.client_id, title, first_title)
        except Exception:
            log.warning("a generated title was not stored", exc_info=True)
            return None
        return title if named else None

    def _remember_words(self, turn: Turn, text: bool, ended: asyncio.Task[None]) -> None:
        """Once the answer has ended, its words (and a new question's) make the conversation findable. Called
        back as it ends: a task waiting all along held about 2 KB per running answer (docs/performance.md)."""
        if ended.cancelled() or ended.exception() is not None:  # a server shutting down mid-answer
            return
        words = [turn.request.text] if text else []
        words.append("".join(turn.said))
        self.keep(self.storage.conversations.remember_words(turn.conversation_id, turn.client_id, "\n".join(words)))

    async def _make_room(self, thread_id: str, client_id: str, strategy: MultitaskStrategy) -> None:
        """Double-texting: end or wait for the answer running in this conversation before the new one starts.
        `interrupt` stops it and keeps what it said; `rollback` stops it and takes its question out too (only
        when the stop cut it short: an answer that ended first, in another process say, stays); `enqueue`
        waits for it to end. (`reject`, the default, leaves it: the new message is refused as a conflict.)"""
        answer_id = await self.active.answer_running_in(thread_id)
        if answer_id is None:
            return
        if strategy == "enqueue":
            await self.active.wait_until_idle(thread_id, client_id, self.settings.total_timeout)
        # Only the answer found running is stopped: a request refused later must not have stopped the answer
        # another request started meanwhile.
        elif await self.active.cancel(thread_id, client_id, answer_id) and strategy == "rollback":
            await roll_back(self.graphs.current, thread_id, answer_id)

    async def _refuse_while_unvoted(self, client_id: str, conversation_id: str) -> None:
        if (pending := await self.storage.comparisons.pending(client_id, conversation_id)) is not None:
            raise Refused(
                "VOTE_REQUIRED",
                f"Pick the better of the two answers first (POST /api/comparisons/{pending}/vote with "
                '{"preference": "A" | "B" | "tie"}); the conversation goes on with the one you choose.',
            )

    async def _settle(self, client_id: str, conversation_id: str) -> None:
        try:
            await self.storage.comparisons.settle(client_id, conversation_id)
        except Exception:
            log.warning("could not let go of settled comparisons' answers", exc_info=True)

    async def _keep_answer(self, comparison_id: str, side: Side, turn: Turn) -> None:
        """Once an answer of a comparison has ended, keep its text, messages and record in the comparison's
        record; B's branch is then deleted: a vote for B puts the kept answer in the conversation."""
        await turn.finished()
        if side == "B":
            asyncio.get_running_loop().call_later(SECOND_ANSWER_KEPT, self.second_answers.pop, comparison_id, None)
        try:
            conversation = await load(turn.graph, turn.thread_id)
            answer_id = turn.request.assistant_message_id
            text, finish_reason = answer_text(conversation, answer_id) or ("", "error")
            answer = msgspec.structs.replace(compared(turn.request), text=text, finish_reason=finish_reason)
            question, messages = answer_messages(conversation, answer_id) or ("", [])
            kept = kept_answer(messages, conversation.records.get(question, {}))
            await self.storage.comparisons.answered(turn.client_id, comparison_id, side, answer, kept)
            if side == "B":
                await self.storage.checkpointer.adelete_thread(turn.thread_id)
        except Exception:
            log.exception("could not record an A/B answer", extra={"conversation_id": turn.conversation_id})


def turn_request(
    message: NewMessage, profile: Profile, options: AnswerOptions, resume: dict[str, Any] | None = None
) -> TurnRequest:
    """One answer's turn; `resume` when it goes on after what it waited for."""
    return TurnRequest(
        user_message_id=message.id,
        text=message.text,
        regenerate=options.regenerate,
        assistant_message_id=message.answer_id,
        model=profile.model_label,
        profile=profile.id,
        created_at=ev.timestamp(),
        trace_id=uuid.uuid4().hex,  # 32 hex digits: also a valid OpenTelemetry and Langfuse trace id
        comparison_id=options.comparison_id or "",
        interactive=options.interactive,
        files=tuple(message.references),
        edit=options.edit,
        input=dict(options.input) if options.input else None,
        browser_tools=tuple(options.browser_tools),
        resume=resume,
    )


def compared(request: TurnRequest) -> ComparedAnswer:
    return ComparedAnswer(
        profile=request.profile, model=request.model, message_id=request.assistant_message_id, trace_id=request.trace_id
    )
