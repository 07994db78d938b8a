"""threadline's routes resolve their synchronous dependencies in turn, without Litestar's task group per batch
(see http/dependencies_in_turn.py for why); a host app's routes keep Litestar's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from litestar import Litestar, get
from litestar.di import NamedDependency, Provide
from litestar.routes import HTTPRoute
from litestar.testing import AsyncTestClient
from threadline.http.app import Threadline
from threadline.http.dependencies_in_turn import InTurnKwargsModel, checked, resolve_in_turn


def test_it_replaces_only_the_resolution_it_was_written_against():
    """Fails after a Litestar upgrade that changes `KwargsModel.resolve_dependencies`: read the new one, then
    update the hash."""
    assert checked()


def kwargs_models(app: Litestar) -> dict[tuple[str, str], Any]:
    return {
        (method, route.path): model
        for route in app.routes
        if isinstance(route, HTTPRoute)
        for method, (_handler, model) in route.route_handler_map.items()
    }


steps: list[str] = []


def first() -> int:
    steps.append("first")
    return 1


def opened() -> Iterator[int]:
    steps.append("opened")
    yield 2
    steps.append("closed")


def both(first: NamedDependency[int], opened: NamedDependency[int]) -> int:
    return first + opened


@get("/host/sum", sync_to_thread=False)
def host_sum(first: NamedDependency[int], opened: NamedDependency[int], both: NamedDependency[int]) -> dict[str, int]:
    return {"first": first, "opened": opened, "both": both}


def host_app(settings) -> Litestar:
    return Litestar(
        route_handlers=[host_sum],
        dependencies={
            "first": Provide(first, sync_to_thread=False),
            "opened": Provide(opened),
            "both": Provide(both, sync_to_thread=False),
        },
        plugins=[Threadline(settings)],
    )


async def test_threadline_routes_resolve_in_turn_and_the_host_apps_keep_litestars(make_settings):
    app = host_app(make_settings())
    models = kwargs_models(app)
    assert isinstance(models[("POST", "/api/chat")], InTurnKwargsModel)
    assert isinstance(models[("GET", "/api/conversations")], InTurnKwargsModel)
    assert not isinstance(models[("GET", "/host/sum")], InTurnKwargsModel)
    async with AsyncTestClient(app=app) as client:
        listed = await client.get("/api/conversations")
        assert listed.status_code == 200, listed.text
        assert (await client.get("/host/sum")).json() == {"first": 1, "opened": 2, "both": 3}


async def test_in_turn_gives_what_litestars_task_group_gives(make_settings):
    """The same route resolved both ways: the same values, each dependency once, a generator's cleanup run."""
    app = host_app(make_settings())
    model = kwargs_models(app)[("GET", "/host/sum")]
    assert resolve_in_turn(model, {first, opened, both})
    async with AsyncTestClient(app=app) as client:
        steps.clear()
        assert (await client.get("/host/sum")).json() == {"first": 1, "opened": 2, "both": 3}
        assert sorted(steps) == ["closed", "first", "opened"]
