"""threadline's routes declare their dependencies so that Litestar resolves each alone: a batch of several would
take a task group, a task per dependency, which costs more than these lookups (Litestar issue #4563)."""

from __future__ import annotations

from litestar import Litestar
from litestar.routes import HTTPRoute
from litestar.testing import AsyncTestClient
from threadline.http.app import Threadline


async def test_no_route_of_threadlines_resolves_a_batch_of_several_dependencies(make_settings):
    app = Litestar(plugins=[Threadline(make_settings())])
    shared = {
        f"{method} {route.path}": [sorted(dependency.key for dependency in batch) for batch in model.dependency_batches]
        for route in app.routes
        if isinstance(route, HTTPRoute)
        for method, (_handler, model) in route.route_handler_map.items()
        if any(len(batch) > 1 for batch in model.dependency_batches)
    }
    assert shared == {}, "declare `ctx: Ctx` (http/dependencies.py) instead of several of its parts"
    async with AsyncTestClient(app=app) as client:
        assert (await client.get("/api/conversations")).status_code == 200
