"""THREADLINE_GRAPH naming a `langgraph.json`, read as LangGraph's CLI reads one.

A public agent (the ReAct template, agents-from-scratch) ships one: `graphs` maps an id to `path.py:name` or
`package.module:name`, `env` is a `.env` file or an object, `dependencies` lists the folders its code is
imported from. Paths are relative to the file's folder; a local dependency's folder and its `src/` go on the
import path; the process environment wins over `env`. `path/langgraph.json` serves its first graph,
`path/langgraph.json:id` the one with that id.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

from dotenv import dotenv_values

from threadline.settings import AGENT_ENV

log = logging.getLogger(__name__)


class ConfigError(ValueError):
    """The langgraph.json cannot be served; the message is one line for the operator."""


def is_config(spec: str) -> bool:
    return spec.endswith(".json") or spec.rpartition(":")[0].endswith(".json")


MAX_STARTER = 500  # characters of one starter prompt


class GraphEntry(NamedTuple):
    """One graph of the file: its id (the `graphs` key), where it is (`file.py:name` or `module:name`), the
    description the file gives it, if any, and the prompts an empty conversation with it offers (`starters`,
    threadline's own key: without them the page offers the model profile's)."""

    id: str
    target: str
    description: str
    starters: tuple[str, ...] = ()


def graph_entries(spec: str) -> list[GraphEntry]:
    """The graphs `spec` picks (every graph of the file, or the one its `:id` names), once the file's
    environment and dependencies are in place."""
    where, graph_id = (spec, None) if spec.endswith(".json") else spec.rsplit(":", 1)
    path = Path(where).resolve()
    try:
        config = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"THREADLINE_GRAPH: no such file {where!r}") from None
    except (OSError, ValueError) as error:
        raise ConfigError(f"THREADLINE_GRAPH: {where} is not a langgraph.json ({error})") from None
    graphs = config.get("graphs") if isinstance(config, dict) else None
    if not isinstance(graphs, dict) or not graphs:
        raise ConfigError(f"THREADLINE_GRAPH: {where} has no `graphs`")
    if graph_id is not None and graph_id not in graphs:
        raise ConfigError(f"THREADLINE_GRAPH: {where} has no graph {graph_id!r} (it has {', '.join(graphs)})")
    _load_env(config.get("env"), path.parent)
    _add_dependencies(config.get("dependencies") or [], path.parent)
    chosen = [graph_id] if graph_id is not None else list(graphs)
    return [_entry(str(key), graphs[key], where, path.parent) for key in chosen]


def auth_target(spec: str) -> str | None:
    """Where the file's `auth` object is (`path.py:name` or `module:name`), when it declares one."""
    if not is_config(spec):
        return None
    where = spec if spec.endswith(".json") else spec.rsplit(":", 1)[0]
    path = Path(where).resolve()
    config = json.loads(path.read_text())
    auth = config.get("auth") if isinstance(config, dict) else None
    target = auth.get("path") if isinstance(auth, dict) else None
    if auth is not None and (not isinstance(target, str) or ":" not in target):
        raise ConfigError(f"THREADLINE_GRAPH: {where}: `auth` must have a `path` (path.py:name or module:name)")
    return _resolved(target, path.parent) if isinstance(target, str) else None


def _entry(graph_id: str, value: Any, where: str, folder: Path) -> GraphEntry:
    target = value.get("path") if isinstance(value, dict) else value  # {"path": ..., "description": ...} too
    if not isinstance(target, str) or ":" not in target:
        raise ConfigError(f"THREADLINE_GRAPH: {where}: graph {graph_id!r} must be path.py:name or module:name")
    description = value.get("description") if isinstance(value, dict) else None
    starters = value.get("starters", []) if isinstance(value, dict) else []
    if not isinstance(starters, list) or not all(isinstance(s, str) and 0 < len(s) <= MAX_STARTER for s in starters):
        raise ConfigError(
            f"THREADLINE_GRAPH: {where}: graph {graph_id!r}'s `starters` must be a list of prompts "
            f"(each 1 to {MAX_STARTER} characters)"
        )
    description = description if isinstance(description, str) else ""
    return GraphEntry(graph_id, _resolved(target, folder), description, tuple(starters))


def _resolved(target: str, folder: Path) -> str:
    location, _, name = target.rpartition(":")
    if location.endswith(".py") or "/" in location:
        return f"{(folder / location).resolve()}:{name}"
    return target


def _load_env(env: Any, folder: Path) -> None:
    """`env` as a file (a missing one is skipped, as a template's `.env` is not shipped) or an object; a
    variable the process already has is left as it is, and one it adds is never read as threadline's setting."""
    if isinstance(env, str):
        file = folder / env
        if not file.is_file():
            log.info("langgraph.json names %s, which does not exist: no environment loaded from it", file)
            return
        values: dict[str, Any] = dict(dotenv_values(file))
    elif isinstance(env, dict):
        values = env
    else:
        return
    added = [name for name, value in values.items() if value is not None and name not in os.environ]
    for name in added:
        os.environ[name] = str(values[name])
    if added:  # the agent's, not threadline's settings (settings.AGENT_ENV), in the processes started after this too
        os.environ[AGENT_ENV] = ",".join(filter(None, [os.environ.get(AGENT_ENV, ""), *added]))


def _add_dependencies(dependencies: list[Any], folder: Path) -> None:
    for dependency in dependencies:
        if not isinstance(dependency, str) or not dependency.startswith((".", "/")):
            continue  # a package to install, not a folder: it must be installed already
        local = (folder / dependency).resolve()
        for place in (local / "src", local):
            if place.is_dir() and str(place) not in sys.path:
                sys.path.insert(0, str(place))
