"""Exact arithmetic and the time in a time zone: the offline tools the built-in MCP server serves."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_BINARY: dict[type[ast.operator], Callable[[Any, Any], float | int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], float | int]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: dict[str, Callable[..., float | int]] = {
    name: getattr(math, name) for name in ("sqrt", "sin", "cos", "tan", "log", "log10", "exp", "floor", "ceil")
}
_FUNCTIONS |= {"abs": abs, "round": round}
_CONSTANTS = {"pi": math.pi, "e": math.e}


def _evaluate(node: ast.AST) -> float | int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 1000:
            raise ValueError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        return _FUNCTIONS[node.func.id](*(_evaluate(arg) for arg in node.args))
    raise ValueError(f"unsupported expression: {ast.unparse(node)}")


def calculate(expression: str) -> str:
    """The exact value of an arithmetic expression; ValueError says what is wrong with it."""
    try:
        result = _evaluate(ast.parse(expression.replace("^", "**"), mode="eval").body)
    except ZeroDivisionError:
        raise ValueError("division by zero") from None
    except SyntaxError:
        raise ValueError(f"not an arithmetic expression: {expression!r}") from None
    if isinstance(result, float) and result.is_integer() and abs(result) < 1e15:
        result = int(result)
    return str(result)


def time_in(timezone: str) -> str:
    """The current date and time in an IANA time zone, as ISO 8601."""
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {timezone!r}; use an IANA name like Europe/Paris") from None
    return datetime.now(zone).isoformat(timespec="seconds")
