"""The package keeps a shape a newcomer can read: ruff holds parameters (7) and complexity; this holds length."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

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
