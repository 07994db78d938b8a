"""How a setting is declared and read: `env(...)` names its variables and help, and a reader turns a variable's
text into a value, or a one-line `SettingsError` naming the variable and what it accepts.

A field with no reader of its own is read by its type and bounds (`reader_of`). The readers here are the
general ones; a section's own (a database URL, a rate) live with the section.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Literal

import msgspec


class SettingsError(ValueError):
    """A setting has a bad value; the message is one line naming the variable and what it accepts."""


# How a variable's text becomes a value: the stripped text (never empty: an empty or missing variable
# means the default) and the variable's name for the error message.
Reader = Callable[[str, str], Any]


@dataclass(frozen=True)
class Env:
    """Where a setting comes from: its variables (the first one set is read) and what the docs say of it."""

    names: tuple[str, ...]
    help: str
    read: Reader | None = None  # None: read by the field's type
    default: str | None = None  # the docs' words for the default, when its value alone says too little
    empty_is_a_value: bool = False  # an empty variable is read (TRUSTED_PROXIES= for none), not a default


def env(*names: str, help: str, read: Reader | None = None, default: str | None = None, empty: bool = False) -> Env:
    return Env(names, help, read, default, empty)


def choice(*allowed: str, upper: bool = False) -> Reader:
    def read(raw: str, name: str) -> str:
        value = raw.upper() if upper else raw
        if value not in allowed:
            raise SettingsError(f"{name} must be one of {', '.join(allowed)} (got {raw!r})")
        return value

    return read


def number(kind: type[int] | type[float], minimum: float, maximum: float, above: float | None = None) -> Reader:
    """A number from `minimum` to `maximum`; with `above`, one greater than it (a bound the value may not reach)."""

    def read(raw: str, name: str) -> int | float:
        try:
            value = kind(raw)
        except ValueError:
            value = None
        if value is None or not minimum <= value <= maximum:
            raise SettingsError(f"{name} must be a {kind.__name__} from {minimum} to {maximum} (got {raw!r})")
        if above is not None and value <= above:
            raise SettingsError(f"{name} must be more than {above} (got {raw!r})")
        return value

    return read


def boolean(raw: str, name: str) -> bool:
    value: str = choice("true", "false")(raw.lower(), name)
    return value == "true"


def comma_list(raw: str, name: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def json_strings(raw: str, name: str) -> tuple[str, ...]:
    try:
        value = msgspec.json.decode(raw, type=tuple[str, ...])
    except msgspec.DecodeError:
        raise SettingsError(f'{name} must be a JSON array of strings, e.g. ["Plan a trip", "Explain DNS"]') from None
    return tuple(item.strip() for item in value if item.strip())


def json_object(raw: str, name: str) -> dict[str, Any]:
    try:
        return msgspec.json.decode(raw, type=dict[str, Any])
    except msgspec.DecodeError:
        raise SettingsError(f'{name} must be a JSON object, e.g. {{"max_search_results": 5}}') from None


def seconds(maximum: float = 3600.0, minimum: float = 0.1) -> Any:
    return msgspec.Meta(ge=minimum, le=maximum)


def read_elsewhere(raw: str, name: str) -> Any:
    raise AssertionError(f"{name} is read with the whole environment")  # pragma: no cover


def reader_of(annotation: Any, meta: list[msgspec.Meta]) -> Reader:
    """How a field's variable is read when the field names no reader: by its type and its bounds."""
    hint = annotation
    if typing.get_origin(hint) is typing.Union:  # `X | None`: read as X
        hint = next(arg for arg in typing.get_args(hint) if arg is not type(None))
    if typing.get_origin(hint) is Literal:
        return choice(*typing.get_args(hint))
    if hint in (int, float):
        bounds = meta[0] if meta else msgspec.Meta()
        lowest = bounds.ge if bounds.ge is not None else -1e18
        return number(hint, lowest, bounds.le if bounds.le is not None else 1e18, bounds.gt)
    if hint is bool:
        return boolean
    if hint is Path:
        return lambda raw, name: Path(raw)
    if typing.get_origin(hint) is tuple:
        return comma_list
    return lambda raw, name: raw


class Section(msgspec.Struct, frozen=True, kw_only=True):
    """A section of the settings: a struct whose every field is a setting, declared with `env(...)`."""

    TITLE: ClassVar[str]  # its heading in the configuration reference


@dataclass(frozen=True)
class Variable:
    """A setting as a section declares it: its section (the field of `Settings` that holds it), its field there,
    its variables, how it is read, and its default."""

    section: str
    field: str
    env: Env
    read: Reader
    default: Any


def variables_of(section: str, struct: type[Section]) -> list[Variable]:
    """Each field of a section struct, as the setting it declares."""
    defaults = struct()
    hints = typing.get_type_hints(struct, include_extras=True)
    found = []
    for field in struct.__struct_fields__:
        annotation, *extras = typing.get_args(hints[field])
        [source] = [extra for extra in extras if isinstance(extra, Env)]
        meta = [extra for extra in extras if isinstance(extra, msgspec.Meta)]
        source = replace(source, names=prefixed(*source.names))
        reader = source.read or reader_of(annotation, meta)
        found.append(Variable(section, field, source, reader, getattr(defaults, field)))
    return found


def read(env_vars: Mapping[str, str], variable: Variable) -> Any:
    """The setting's value: from the first of its variables that is set, else its default (also for a setting that
    is read with the whole environment, `read_elsewhere`)."""
    if variable.read is read_elsewhere:
        return variable.default
    for name in variable.env.names:
        raw = env_vars.get(name)
        if raw is not None and (raw.strip() or variable.env.empty_is_a_value):
            return variable.read(raw.strip(), name)
    return variable.default


PREFIX = "THREADLINE_"


def prefixed(*names: str) -> tuple[str, ...]:
    """Every setting is also THREADLINE_<NAME>, read first, so it never collides with a host app's own
    LOG_LEVEL or DATABASE_URL; the plain names stay as aliases."""
    return tuple(dict.fromkeys([*(name if name.startswith(PREFIX) else PREFIX + name for name in names), *names]))
