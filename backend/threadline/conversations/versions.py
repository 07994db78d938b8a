"""Edits and regenerated answers keep what they replace: a conversation is a tree, one branch of it shown.

The checkpoint's `messages` are the branch shown. Where a branch forks, a `Fork` keeps the versions not
shown: an edit of a user message forks at that message (the versions are it and everything after it), a
regenerated answer forks after its question (the versions are the answer and everything after it). A
version set aside takes along the records of its answers and the forks within it, so the tree nests: the
forks in `forks` are always those along the branch shown. Switching a fork's version swaps what is
shown with what was set aside, in one checkpoint write; everything that reads the conversation (history,
feedback, traces, resume, the seed wires) then follows the branch shown without knowing about the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

from langchain_core.messages import AnyMessage, HumanMessage, RemoveMessage

from threadline.conversations.state import AnswerRecord, Conversation, StateWriter, closing_node, config_of
from threadline.refusals import not_found

ANSWER = ":answer"  # a fork's key for the versions of a question's answer: the question's id and this


class Version(TypedDict):
    """A continuation not shown: its messages, its answers' records and the forks within it."""

    messages: list[AnyMessage]
    records: dict[str, AnswerRecord]
    forks: dict[str, Fork]


class Fork(TypedDict):
    """The versions at one place, in the order they were made; the one shown has no content here (None):
    it is the conversation's own messages."""

    shown: int
    versions: list[Version | None]


def merge_forks(left: dict[str, Fork] | None, right: dict[str, Fork | None] | None) -> dict[str, Fork]:
    """The state's reducer for forks: an update sets a fork, or takes it out with None."""
    merged = dict(left or {})
    for key, fork in (right or {}).items():
        if fork is None:
            merged.pop(key, None)
        else:
            merged[key] = fork
    return merged


def answer_key(question_id: str) -> str:
    return question_id + ANSWER


def _start(messages: Sequence[AnyMessage], key: str) -> int | None:
    """Where the continuation a fork's versions replace begins: at the edited message, or after the question
    whose answer was regenerated."""
    question_id, answer = (key[: -len(ANSWER)], 1) if key.endswith(ANSWER) else (key, 0)
    index = next((i for i, message in enumerate(messages) if message.id == question_id), None)
    if index is None or not isinstance(messages[index], HumanMessage):
        return None
    return index + answer


class Change(TypedDict):
    """A checkpoint update: messages out and in, records set or taken out, forks set or taken out."""

    messages: list[Any]
    turns: dict[str, AnswerRecord | None]
    versions: dict[str, Fork | None]


def set_aside(
    messages: Sequence[AnyMessage], records: dict[str, AnswerRecord], forks: dict[str, Fork], key: str
) -> tuple[Version, Change] | None:
    """The continuation at `key` as a version, and the change that takes it out of the branch shown; None when
    the key's message is not on that branch."""
    start = _start(messages, key)
    if start is None:
        return None
    tail = list(messages[start:])
    questions = [message.id or "" for message in tail if isinstance(message, HumanMessage)]
    within = {fork for question in questions for fork in (question, answer_key(question))} - {key}
    if key.endswith(ANSWER):
        questions.insert(0, key[: -len(ANSWER)])  # the regenerated answer's record is its question's
    version = Version(
        messages=tail,
        records={question: records[question] for question in questions if question in records},
        forks={fork: forks[fork] for fork in within if fork in forks},
    )
    change = Change(
        messages=[RemoveMessage(id=message.id) for message in tail if message.id],
        turns=dict.fromkeys(version["records"]),
        versions=dict.fromkeys(version["forks"]),
    )
    return version, change


def branch(
    messages: Sequence[AnyMessage], records: dict[str, AnswerRecord], forks: dict[str, Fork], key: str
) -> Change | None:
    """A new version at `key` (an edit, or a regenerated answer): what is there now is kept as a version, and
    the change makes room for the new one, which the caller adds. None when the key is not on the branch."""
    aside = set_aside(messages, records, forks, key)
    if aside is None:
        return None
    version, change = aside
    fork = forks.get(key) or Fork(shown=0, versions=[None])
    versions = list(fork["versions"])
    versions[fork["shown"]] = version
    change["versions"][key] = Fork(shown=len(versions), versions=[*versions, None])
    return change


def show(
    messages: Sequence[AnyMessage], records: dict[str, AnswerRecord], forks: dict[str, Fork], key: str, number: int
) -> Change | None:
    """The change that shows version `number` (from 0) of the fork at `key` instead of the one shown; None when
    there is no such fork or version on the branch shown."""
    fork = forks.get(key)
    if fork is None or not 0 <= number < len(fork["versions"]):
        return None
    aside = set_aside(messages, records, forks, key)
    if aside is None:
        return None
    if number == fork["shown"]:
        return Change(messages=[], turns={}, versions={})
    hidden, change = aside
    shown = fork["versions"][number]
    assert shown is not None, "only the version shown has no content"
    versions = list(fork["versions"])
    versions[fork["shown"]], versions[number] = hidden, None
    change["messages"] += shown["messages"]
    change["turns"] |= shown["records"]
    change["versions"] |= shown["forks"]
    change["versions"][key] = Fork(shown=number, versions=versions)
    return change


def key_of(conversation: Conversation, message_id: str) -> str:
    """The fork a displayed message's versions are kept under: a user message's own id (its edits), or an
    answer's question's id and ANSWER (its regenerations); an answer is shown under its assistant id."""
    question = conversation.question_answered_by(message_id)
    return message_id if question is None else answer_key(question)


def numbering(forks: dict[str, Fork]) -> dict[str, tuple[int, int]]:
    """(the version shown, from 1; how many) by fork key, for the forks along the branch shown."""
    return {key: (fork["shown"] + 1, len(fork["versions"])) for key, fork in forks.items()}


async def show_version(graph: StateWriter, conversation: Conversation, message_id: str, number: int) -> None:
    """Show version `number` (from 1) of the displayed message `message_id` (a user message, or an answer by
    its assistant id); not found when it has no such version on the branch shown."""
    key = key_of(conversation, message_id)
    change = show(conversation.messages, conversation.records, conversation.forks, key, number - 1)
    if change is None:
        raise not_found("Version")
    if change["messages"] or change["versions"]:
        await graph.aupdate_state(config_of(conversation.thread_id), dict(change), as_node=closing_node(graph))
