"""Configuration checks: a bad evaluator setting fails when the evaluator is built, naming the field.

Dataset files reach the constructors untyped (a YAML string where a list belongs, a misspelt
literal), and plain dataclasses do not validate annotations; without these checks a typo scores
something else silently. Each check returns the problem, or `None`; `raise_problems` turns the
problems of one evaluator into one `ValueError` naming its class.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable


def raise_problems(evaluator: object, problems: Iterable[str | None]) -> None:
    """Raise `ValueError('Class: problem; problem')` when any check found a problem."""
    found = [p for p in problems if p is not None]
    if found:
        raise ValueError(f'{type(evaluator).__name__}: {"; ".join(found)}')


def texts(name: str, value: object) -> str | None:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        return f'{name} must be a list of tool names, got {value!r}'
    bad = [item for item in value if not isinstance(item, str)]
    return f'{name} must hold tool names (strings), got {bad[0]!r}' if bad else None


def topics(name: str, value: object) -> str | None:
    """A non-empty list of non-blank strings."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(t, str) and t.strip() for t in value):
        return None
    return f'{name} must be a non-empty list of topics, got {value!r}'


def text(name: str, value: object) -> str | None:
    return None if isinstance(value, str) else f'{name} must be a string, got {value!r}'


def non_empty_text(name: str, value: object) -> str | None:
    return None if isinstance(value, str) and value.strip() else f'{name} must be a non-empty string, got {value!r}'


def optional_non_empty_text(name: str, value: object) -> str | None:
    if value is None or (isinstance(value, str) and value.strip()):
        return None
    return f'{name} must be a non-empty string or None, got {value!r}'


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


def mapping(name: str, value: object, keys: str = 'argument names') -> str | None:
    return None if isinstance(value, dict) else f'{name} must be a mapping of {keys} to values, got {value!r}'
