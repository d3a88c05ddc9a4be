"""Configuration checks: a bad evaluator setting fails when the evaluator is built, naming the field.

Dataset files reach the constructors untyped (a YAML string where a list belongs, a misspelt
literal), and plain dataclasses do not validate annotations; without these checks a typo scores
something else silently. Each check returns the problem, or `None`.
"""

from __future__ import annotations

from collections.abc import Collection


def texts(name: str, value: object) -> str | None:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        return f'{name} must be a list of tool names, got {value!r}'
    bad = [item for item in value if not isinstance(item, str)]
    return f'{name} must hold tool names (strings), got {bad[0]!r}' if bad else None


def text(name: str, value: object) -> str | None:
    return None if isinstance(value, str) else f'{name} must be a string, got {value!r}'


def optional_str(name: str, value: object) -> str | None:
    return None if value is None or isinstance(value, str) else f'{name} must be a string or None, got {value!r}'


def flag(name: str, value: object) -> str | None:
    return None if isinstance(value, bool) else f'{name} must be true or false, got {value!r}'


def choice(name: str, value: object, options: Collection[object]) -> str | None:
    if value in options and not isinstance(value, bool):
        return None
    return f'{name} must be one of {", ".join(repr(o) for o in options)}; got {value!r}'


def non_negative_int(name: str, value: object) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return None
    return f'{name} must be a whole number >= 0, got {value!r}'


def mapping(name: str, value: object) -> str | None:
    return None if isinstance(value, dict) else f'{name} must be a mapping of argument names to values, got {value!r}'
