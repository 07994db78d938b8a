"""Litestar's dependency resolution without a task group for providers that cannot run concurrently.

Litestar resolves a handler's dependencies in batches (each batch needs only what the ones before it made) and
each batch of more than one inside an anyio task group, so that async providers wait together. A task group
makes a task per dependency; with trivial providers that costs more than the providers (Litestar issue #4563).
threadline's are synchronous lookups (the services, the caller's id, the limits, the chat allowance): in a task
group they run one after another all the same, each in a task of its own. A route of threadline's whose shared
batches are all synchronous resolves them in turn, in the same order of batches, with the same cleanup. Only while
Litestar's function is the one this was checked against (its source's hash; the test fails after an upgrade that
changes it); a host app's own routes keep Litestar's.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Collection
from functools import cache
from typing import Any

from litestar._kwargs.cleanup import DependencyCleanupGroup
from litestar._kwargs.dependencies import DependencyContainer, resolve_dependency
from litestar._kwargs.kwargs_model import KwargsModel
from litestar.connection import ASGIConnection

# sha256 of `inspect.getsource(KwargsModel.resolve_dependencies)` (litestar 2.25.0)
CHECKED_SOURCE = "f5e60119abf69eff695b2287a6e46a44688f06a70157c4292243fa09080e44fa"


class InTurnKwargsModel(KwargsModel):
    """A route's kwargs model whose batches of more than one dependency are synchronous: each dependency is
    resolved in turn (a batch of one is awaited alone by Litestar too)."""

    __slots__ = ()

    async def resolve_dependencies(
        self, connection: ASGIConnection[Any, Any, Any, Any], kwargs: dict[str, Any]
    ) -> DependencyCleanupGroup:
        cleanup_group = DependencyCleanupGroup()
        for batch in self.dependency_batches:
            for dependency in batch:
                await resolve_dependency(dependency, connection, kwargs, cleanup_group)
        return cleanup_group


def synchronous(dependency: DependencyContainer) -> bool:
    """Whether resolving it never waits: a plain function or a generator, called in the event loop's thread."""
    provide = dependency.provide
    return provide.has_sync_callable and not provide.has_async_generator_dependency


@cache
def checked() -> bool:
    """Whether Litestar's resolution is still the one `InTurnKwargsModel` was written against."""
    source = inspect.getsource(KwargsModel.resolve_dependencies)
    return hashlib.sha256(source.encode()).hexdigest() == CHECKED_SOURCE


def resolve_in_turn(model: KwargsModel, ours: Collection[Callable[..., Any]]) -> bool:
    """Make `model` resolve its dependencies in turn when each is one of `ours` (the functions of threadline's
    providers) and a batch of them would take a task group for nothing; True when it does."""
    dependencies = [dependency for batch in model.dependency_batches for dependency in batch]
    if not all(dependency.provide.dependency in ours for dependency in dependencies):
        return False
    shared = [batch for batch in model.dependency_batches if len(batch) > 1]
    if not shared or not all(synchronous(dependency) for batch in shared for dependency in batch) or not checked():
        return False
    model.__class__ = InTurnKwargsModel  # the same slots: only the method differs
    return True
