"""What the wire shows of a tool before it runs: its title, and whether the model's input for it is valid.

A call to a tool that does not exist, or with input its JSON schema refuses, is shown as `tool-input-error`
(the model got it wrong) rather than as a tool that ran and failed (`tool-output-error`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from jsonschema import exceptions, validators
from langchain_core.tools import BaseTool


@dataclass(frozen=True)
class ToolInfo:
    title: str  # the MCP tool's title, "" when it has none
    problem: Callable[[Any], str | None]  # what is wrong with an input, None when it is valid
    arguments: frozenset[str] | None = None  # the arguments it declares; None: any (its schema allows others)

    def edit_problem(self, value: Any) -> str | None:
        """What is wrong with an input a person changed: as for the model's, and an argument the tool does not
        declare is refused too, even where its schema would let it through (LangChain's schemas do)."""
        if self.arguments is not None and isinstance(value, dict) and (extra := sorted(set(value) - self.arguments)):
            return f"the tool has no argument {', '.join(extra)} (it takes {', '.join(sorted(self.arguments))})"
        return self.problem(value)


def schema_checker(schema: Any) -> Callable[[Any], str | None]:
    """What is wrong with a value for a JSON schema (None when it is valid); a schema that is not one accepts all."""
    if not isinstance(schema, dict):
        return lambda _: None
    validator = validators.validator_for(schema)(schema)

    def problem(value: Any) -> str | None:
        error = exceptions.best_match(validator.iter_errors(value))
        return None if error is None else f"Invalid input: {error.message}"

    return problem


def tool_infos(tools: Sequence[BaseTool]) -> dict[str, ToolInfo]:
    return {
        tool.name: ToolInfo(
            getattr(tool, "title", None) or "", schema_checker(tool.args_schema), declared_arguments(tool.args_schema)
        )
        for tool in tools
    }


def declared_arguments(schema: Any) -> frozenset[str] | None:
    """The properties a tool's JSON schema declares; None where it takes others too (`additionalProperties`)."""
    if isinstance(schema, dict):
        if schema.get("additionalProperties") not in (None, False):
            return None
        return frozenset(schema.get("properties") or {})
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):  # a tool's Pydantic arguments
        return frozenset(schema.model_json_schema().get("properties") or {})
    return None
