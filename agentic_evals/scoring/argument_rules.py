"""How one call's arguments are compared with the expected ones: a mode, and rules for single keys.

A mode says which keys must be there: `exact` (the same keys), `subset` (every actual key is
expected), `superset` (every expected key is there), `ignore` (none). Values compare as
`canonical_json` unless a rule for the key says otherwise: ignore it, a numeric tolerance, a regular
expression, case- or whitespace-insensitive text, one of several values, or a Python callable.
Rules name keys by dotted path (`address.city`), so nested values can be loosened one at a time.

Everything is parsed once, when an evaluator is built, into `ArgumentMatcher`s; a bad rule is a
`ValueError` naming the tool and key.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .call_matching import canonical_json
from .sequences import short_repr

ArgumentsMode = Literal['exact', 'ignore', 'subset', 'superset']
"""`exact`: the same keys and values; `subset`: the actual call's arguments are a subset of the
expected ones; `superset`: the actual call has every expected key with its value; `ignore`: names only."""
ARGUMENTS_MODES: tuple[ArgumentsMode, ...] = ('exact', 'ignore', 'subset', 'superset')

Check = Callable[[Any, Any], bool]
"""A Python comparison `(actual, expected) -> bool`, of one key's values or of whole argument dicts."""

_RULE_KEYS = ('abs', 'rel', 'regex', 'ignore_case', 'ignore_whitespace', 'one_of')
_MISSING = object()


@dataclass(frozen=True)
class KeyRule:
    """How the values of one key compare. With `regex`, `one_of` or `check`, the expected value is
    not needed: the rule itself says what is allowed, and a key with such a rule counts as expected."""

    ignore: bool = False
    abs: float = 0.0
    rel: float = 0.0
    regex: re.Pattern[str] | None = None
    ignore_case: bool = False
    ignore_whitespace: bool = False
    one_of: tuple[Any, ...] | None = None
    check: Check | None = None

    @property
    def constrains(self) -> bool:
        """Whether the rule alone says what the value may be (so the key is expected even when absent)."""
        return self.regex is not None or self.one_of is not None or self.check is not None

    def matches(self, actual: Any, expected: Any) -> bool:
        if self.check is not None:
            return bool(self.check(actual, None if expected is _MISSING else expected))
        if self.regex is not None:
            return isinstance(actual, str) and self.regex.fullmatch(self._text(actual)) is not None
        if self.one_of is not None:
            return any(self._equal(actual, option) for option in self.one_of)
        return self._equal(actual, expected)

    def _text(self, value: str) -> str:
        if self.ignore_whitespace:
            value = ' '.join(value.split())
        return value.casefold() if self.ignore_case else value

    def _equal(self, actual: Any, expected: Any) -> bool:
        if (self.abs or self.rel) and _is_number(actual) and _is_number(expected):
            return math.isclose(actual, expected, rel_tol=self.rel, abs_tol=self.abs)
        if (self.ignore_case or self.ignore_whitespace) and isinstance(actual, str) and isinstance(expected, str):
            return self._text(actual) == self._text(expected)
        return canonical_json(actual) == canonical_json(expected)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class ArgumentMatcher:
    """The comparison for one tool: a mode and key rules, or LangChain's key list, or a callable."""

    mode: ArgumentsMode = 'exact'
    rules: Mapping[str, KeyRule] = field(default_factory=dict[str, KeyRule])
    keys: tuple[str, ...] | None = None
    """Compare only these dotted keys, each for equality (LangChain's list override)."""
    check: Check | None = None
    """Compare the whole argument dicts with this callable instead."""

    @property
    def is_simple(self) -> bool:
        """A mode alone (no rules, key list or callable): arguments then compare as sets of key-value pairs."""
        return not self.rules and self.keys is None and self.check is None

    @property
    def is_plain(self) -> bool:
        """`exact` or `ignore` with no rules: matching is then an equivalence, and calls can be counted."""
        return self.mode in ('exact', 'ignore') and not self.rules and self.keys is None and self.check is None

    def problems(self, actual: dict[str, Any] | None, expected: dict[str, Any] | None, why: str | None) -> list[str]:
        """What keeps `actual` from matching `expected`; empty when it matches.

        `expected is None` means the expectation gave no arguments: any call of the tool matches.
        `actual is None` means the call's arguments could not be read (`why` says why).
        """
        return list(self._differences(actual, expected, why))

    def matches(self, actual: dict[str, Any] | None, expected: dict[str, Any] | None) -> bool:
        """`not problems(...)`, stopping at the first difference: pairing asks this of many pairs of
        calls, and a difference is worded only if it is the first."""
        return next(self._differences(actual, expected, None), None) is None

    def _differences(
        self, actual: dict[str, Any] | None, expected: dict[str, Any] | None, why: str | None
    ) -> Iterator[str]:
        """The differences, worded one at a time as they are found."""
        if expected is None or (self.mode == 'ignore' and self.check is None and self.keys is None):
            return
        if actual is None:
            yield f'arguments {why or "unreadable"}'
        elif self.check is not None:
            if not self.check(actual, expected):
                yield f'{short_repr(actual)} rejected by the argument check'
        elif self.keys is not None:
            for key in self.keys:
                if canonical_json(a := _get(actual, key)) != canonical_json(e := _get(expected, key)):
                    yield f'key {key!r}: expected {_shown(e)}, got {_shown(a)}'
        else:
            yield from self._by_key(actual, expected)

    def _by_key(self, actual: dict[str, Any], expected: dict[str, Any]) -> Iterator[str]:
        mode, rules = self.mode, self.rules
        take: Callable[[dict[str, Any], str], Any]
        ruled: Mapping[str, KeyRule]
        if any('.' in path for path in rules):  # nested keys: compare copies with the ruled values taken out
            actual, expected = _copy(actual), _copy(expected)
            take, ruled = _pop, {}
        else:  # top-level keys only: read them in place, and skip them below
            take, ruled = _read, rules
        for path, rule in rules.items():
            a, e = take(actual, path), take(expected, path)
            if rule.ignore:
                continue
            if a is _MISSING:
                if (e is not _MISSING or rule.constrains) and mode in ('exact', 'superset'):
                    yield f'missing key {path!r}'
            elif e is _MISSING and not rule.constrains:
                if mode in ('exact', 'subset'):
                    yield f'unexpected key {path!r}'
            elif not rule.matches(a, e):
                yield f'key {path!r}: expected {_describe(rule, e)}, got {short_repr(a)}'
        for key in sorted(expected):
            if key in ruled:
                continue
            if key not in actual:
                if mode in ('exact', 'superset'):
                    yield f'missing key {key!r}'
            elif canonical_json(actual[key]) != canonical_json(expected[key]):
                yield f'key {key!r}: expected {short_repr(expected[key])}, got {short_repr(actual[key])}'
        if mode in ('exact', 'subset'):
            for key in sorted(actual):
                if key not in expected and key not in ruled:
                    yield f'unexpected key {key!r}'


def _shown(value: object) -> str:
    return 'nothing' if value is None else short_repr(value)


def _describe(rule: KeyRule, expected: object) -> str:
    if rule.check is not None:
        return 'a value the check accepts'
    if rule.regex is not None:
        return f'a match of {rule.regex.pattern!r}'
    if rule.one_of is not None:
        return f'one of {short_repr(list(rule.one_of))}'
    tolerance = [f'{name} {value:g}' for name, value in (('abs', rule.abs), ('rel', rule.rel)) if value]
    loosened = [
        *tolerance,
        *(['any case'] if rule.ignore_case else []),
        *(['any spacing'] if rule.ignore_whitespace else []),
    ]
    return short_repr(expected) + (f' ({", ".join(loosened)})' if loosened else '')


def _get(args: Mapping[str, Any], path: str) -> Any:
    """A dotted path's value, `None` when absent (LangChain's reading of its key lists)."""
    current: Any = args
    for part in path.split('.'):
        if not isinstance(current, Mapping):
            return None
        current = current.get(part)
    return current


def _read(args: dict[str, Any], key: str) -> Any:
    """A top-level key's value, or `_MISSING`."""
    return args.get(key, _MISSING)


def _copy(args: dict[str, Any]) -> dict[str, Any]:
    """Dicts copied all the way down (rules remove keys from nested dicts), other values shared."""
    return {k: _copy(v) if isinstance(v, dict) else v for k, v in args.items()}


def _pop(args: dict[str, Any], path: str) -> Any:
    """Remove and return the value at a dotted path, or `_MISSING`; a dict left empty by it is removed too."""
    parts = path.split('.')
    parents: list[tuple[dict[str, Any], str]] = []
    current: Any = args
    for part in parts[:-1]:
        if not isinstance(current, dict) or not isinstance(current.get(part), dict):
            return _MISSING
        parents.append((current, part))
        current = current[part]
    if not isinstance(current, dict) or parts[-1] not in current:
        return _MISSING
    value = current.pop(parts[-1])
    for parent, key in reversed(parents):
        if parent[key]:
            break
        del parent[key]
    return value


# -- configuration ------------------------------------------------------------------------------------


def parse_rule(tool: str, path: str, rule: object) -> KeyRule:
    """A rule as written in YAML (`ignore`, or a mapping of `_RULE_KEYS`) or a Python callable."""
    where = f'argument_rules[{tool!r}][{path!r}]'
    if not isinstance(path, str) or not path or any(not part for part in path.split('.')):
        raise ValueError(f'argument_rules[{tool!r}]: {path!r} is not a key or dotted path')
    if rule == 'ignore':
        return KeyRule(ignore=True)
    if callable(rule):
        return KeyRule(check=rule)
    if not isinstance(rule, Mapping) or not rule:
        raise ValueError(f"{where} must be 'ignore', a mapping of {', '.join(_RULE_KEYS)}, or a callable; got {rule!r}")
    unknown = sorted(str(k) for k in rule if k not in _RULE_KEYS)
    if unknown:
        raise ValueError(f'{where}: unknown rule {", ".join(map(repr, unknown))} (known: {", ".join(_RULE_KEYS)})')
    options: dict[str, Any] = {}
    for name in ('abs', 'rel'):
        if name in rule:
            value = rule[name]
            if not _is_number(value) or not math.isfinite(value) or value < 0:
                raise ValueError(f'{where}: {name} must be a number >= 0, got {value!r}')
            options[name] = float(value)
    for name in ('ignore_case', 'ignore_whitespace'):
        if name in rule:
            if not isinstance(rule[name], bool):
                raise ValueError(f'{where}: {name} must be true or false, got {rule[name]!r}')
            options[name] = rule[name]
    if 'regex' in rule:
        pattern = rule['regex']
        if not isinstance(pattern, str):
            raise ValueError(f'{where}: regex must be a string, got {pattern!r}')
        try:
            options['regex'] = re.compile(pattern, re.IGNORECASE if options.get('ignore_case') else 0)
        except re.error as e:
            raise ValueError(f'{where}: regex {pattern!r} does not compile: {e}') from None
    if 'one_of' in rule:
        values = rule['one_of']
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence) or not values:
            raise ValueError(f'{where}: one_of must be a non-empty list of values, got {values!r}')
        options['one_of'] = tuple(values)
    if 'regex' in options and 'one_of' in options:
        raise ValueError(f'{where}: give regex or one_of, not both')
    return KeyRule(**options)


def parse_matchers(
    arguments: object, tool_arguments: object, argument_rules: object
) -> tuple[ArgumentMatcher, dict[str, ArgumentMatcher]]:
    """The default matcher and one per tool named in `tool_arguments` or `argument_rules`.

    `tool_arguments[tool]` is a mode, a list of dotted keys (compare only those), or a callable on
    the whole argument dicts; `argument_rules[tool]` (or `'*'`, for every tool) maps dotted keys to
    rules; a tool's own rule for a key wins over the `'*'` one.
    """
    if arguments not in ARGUMENTS_MODES or isinstance(arguments, bool):
        raise ValueError(f'arguments must be one of {", ".join(map(repr, ARGUMENTS_MODES))}; got {arguments!r}')
    default_mode: ArgumentsMode = arguments
    overrides = _mapping(tool_arguments, 'tool_arguments must be a mapping of tool names')
    rules = _mapping(argument_rules, 'argument_rules must be a mapping of tool names')
    parsed_rules: dict[str, dict[str, KeyRule]] = {}
    for tool, by_key in rules.items():
        if not isinstance(by_key, Mapping):
            raise ValueError(f'argument_rules[{tool!r}] must map argument keys to rules, got {by_key!r}')
        parsed_rules[tool] = {path: parse_rule(tool, path, rule) for path, rule in by_key.items()}
    shared = parsed_rules.pop('*', {})
    default = ArgumentMatcher(default_mode, shared)
    matchers: dict[str, ArgumentMatcher] = {}
    for tool in sorted({*overrides, *parsed_rules}):
        own = {**shared, **parsed_rules.get(tool, {})}
        override = overrides.get(tool, default_mode)
        if callable(override):
            matchers[tool] = ArgumentMatcher(default_mode, own, check=override)
        elif isinstance(override, str) and override in ARGUMENTS_MODES:
            matchers[tool] = ArgumentMatcher(override, own)
        elif isinstance(override, (list, tuple)) and all(isinstance(k, str) and k for k in override):
            matchers[tool] = ArgumentMatcher(default_mode, own, keys=tuple(override))
        else:
            raise ValueError(
                f'tool_arguments[{tool!r}] must be one of {", ".join(map(repr, ARGUMENTS_MODES))}, a list of keys'
                f' or a callable; got {override!r}'
            )
    return default, matchers


def _mapping(value: object, problem: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and k for k in value):
        raise ValueError(f'{problem}, got {value!r}')
    return dict(value)
