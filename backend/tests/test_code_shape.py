"""The package keeps a shape a newcomer can read: ruff holds parameters (7) and complexity; this holds length."""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "threadline"
PYPROJECT = PACKAGE.parents[1] / "pyproject.toml"
MAX_LINES = 60


def test_no_function_is_longer_than_sixty_lines():
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_LINES:
                    long.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, "split these: " + ", ".join(long)


def test_one_layers_contract_places_every_unit_of_the_package():
    """A new package or root module must be given its place in the order, so nothing is outside the layers."""
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    (layers,) = [contract["layers"] for contract in contracts if contract["type"] == "layers"]
    placed = {name.removeprefix("threadline.") for layer in layers for name in re.split(r"\s*\|\s*", layer)}
    units = {path.stem for path in PACKAGE.glob("*.py") if path.stem != "__init__"}
    units |= {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert units == placed, f"not in the layers: {sorted(units - placed)}; no such unit: {sorted(placed - units)}"


@pytest.mark.parametrize("message", ["hello", "calculate 6*7"])
def test_an_answers_calls_go_down_the_layers(message):
    """docs/route_files.py's trace of one POST /api/chat: no call up the layer order, no two units calling each other,
    and no HTTP re-entry (the built-in tools are called in process)."""
    spec = importlib.util.spec_from_file_location("route_files", PACKAGE.parents[1] / "docs" / "route_files.py")
    assert spec is not None and spec.loader is not None
    route_files = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(route_files)
    calls = asyncio.run(route_files.traced_request(message))
    layers = route_files.layer_of()
    unit = route_files.unit_of
    up = {pair for pair in calls.between if layers[unit(pair[1])] < layers[unit(pair[0])]}
    units = {(unit(caller), unit(callee)) for caller, callee in calls.between}
    assert sorted(up) == []
    assert sorted((a, b) for a, b in units if (b, a) in units) == []
    assert calls.reentries == 0


def test_no_chunk_type_has_the_name_of_a_canonical_event():
    """The wires' own chunk types are named apart from the events they encode (`StartChunk` for `Start`)."""
    declared = {
        path: set(re.findall(r"^class (\w+)\(", (PACKAGE / path).read_text(), re.M))
        for path in ("events.py", "wires/ui_chunks.py", "client/chunks.py")
    }
    events = declared.pop("events.py")
    assert {path: names & events for path, names in declared.items()} == {
        "wires/ui_chunks.py": set(),
        "client/chunks.py": set(),
    }


def test_every_package_lists_only_what_it_has():
    """A package's `__all__` names its modules (or its names): `from threadline.<package> import *` works."""
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        exec(f"from threadline.{init.parent.name} import *", {})  # raises on a name the package does not have


SQL = re.compile(r"^\s*(SELECT |INSERT INTO |UPDATE \w+ SET |DELETE FROM |WITH \w+ AS |LISTEN |CREATE |ALTER |DROP )")


def test_sql_is_only_in_storage():
    """What is kept, and how, is storage/'s alone: no statement, and no call that runs one, anywhere else."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "storage":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.match(node.value):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.value[:40]!r}")
            if isinstance(node, ast.Attribute) and node.attr in ("execute", "executemany"):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} .{node.attr}(")
    assert found == []
