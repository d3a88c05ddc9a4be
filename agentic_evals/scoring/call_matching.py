"""Comparing tool calls with their arguments: canonical values, multiset pairing, and the reasons.

Pure functions over `CallView`s (a name and parsed arguments), shared by the reference-call metrics
in `agentic_evals.metrics` (ragas' ToolCallAccuracy and ToolCallF1 semantics, made right).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .sequences import multiset_diff


@dataclass(frozen=True)
class CallView:
    """One call as the metrics see it; `args` is `None` when unknown, and `problem` then says why."""

    name: str
    args: dict[str, Any] | None
    problem: str | None = None


def counts(counter: Counter[str]) -> str:
    return ', '.join([f'{name!r} (x{count})' for name, count in sorted(counter.items())])


def canonical_json(value: object) -> str:
    """The text two argument values are compared by: JSON with sorted keys, `1.0` written as `1`.

    So `{'a': 1, 'b': 2}` equals `{'b': 2, 'a': 1}` and `1` equals `1.0` (JSON has one number type),
    while `1`, `'1'` and `True` all differ. ragas compares `str()` of the values instead.
    """
    return json.dumps(_normalise(value), sort_keys=True, ensure_ascii=False, separators=(',', ':'), default=repr)


def _normalise(value: object) -> object:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise(v) for v in value]
    return value


def _identity(call: CallView) -> tuple[str, str | None]:
    """Equal identities mean equal calls; unreadable arguments equal nothing (callers check for `None`)."""
    return call.name, None if call.args is None else canonical_json(call.args)


def _show(call: CallView) -> str:
    if call.args is None:
        return f'{call.name}(<arguments {call.problem}>)'
    return f'{call.name}({", ".join(f"{k}={v!r}" for k, v in sorted(call.args.items()))})'


def _sort_key(call: CallView) -> tuple[str, ...]:
    """ragas' flexible-order key (name, then each argument name and value) with nested values made canonical."""
    key = [call.name]
    for name in sorted(call.args or {}):
        value = (call.args or {})[name]
        key += [name, value if isinstance(value, str) else canonical_json(value)]
    return tuple(key)


def _argument_score(call: CallView, reference: CallView) -> float:
    """Share of the reference's arguments the call got right; extra arguments in the call cost nothing."""
    if call.args is None:
        return 0.0
    if not reference.args:
        return 0.0 if call.args else 1.0
    right = sum(k in call.args and canonical_json(call.args[k]) == canonical_json(v) for k, v in reference.args.items())
    return right / len(reference.args)


def _argument_problems(call: CallView, reference: CallView, *, exact: bool) -> list[str]:
    """What keeps `call` from matching `reference`: under `exact` (F1) every key counts, else only the reference's."""
    if call.args is None:
        return [f'arguments {call.problem}']
    ref_args = reference.args or {}
    if not ref_args and call.args and not exact:
        return [f'expected no arguments, got {dict(sorted(call.args.items()))!r}']
    problems: list[str] = []
    for key in sorted(ref_args):
        if key not in call.args:
            problems.append(f'missing key {key!r}')
        elif canonical_json(call.args[key]) != canonical_json(ref_args[key]):
            problems.append(f'key {key!r}: expected {ref_args[key]!r}, got {call.args[key]!r}')
    if exact:
        problems += [f'unexpected key {k!r}' for k in sorted(call.args) if k not in ref_args]
    return problems


def _mismatch(call: CallView, reference: CallView, *, exact: bool) -> str | None:
    problems = _argument_problems(call, reference, exact=exact)
    return f'{_show(reference)} vs {_show(call)}: {", ".join(problems)}' if problems else None


def listing(calls: list[CallView]) -> str:
    tally = Counter(_show(c) for c in calls)
    return ', '.join(f'{shown} (x{n})' if n > 1 else shown for shown, n in sorted(tally.items()))


def sections(*parts: tuple[str, str]) -> str:
    return ''.join(f'; {label}: {text}' for label, text in parts if text)


def compare(calls: list[CallView], reference: list[CallView]) -> tuple[list[CallView], list[CallView], list[CallView]]:
    """`(matched, missing, extra)` as multisets: a call matches a reference call with the same identity."""
    pool: dict[tuple[str, str | None], list[CallView]] = {}
    for call in calls:
        if call.args is not None:
            pool.setdefault(_identity(call), []).append(call)
    matched: list[CallView] = []
    missing: list[CallView] = []
    for ref in reference:
        candidates = pool.get(_identity(ref))
        if candidates:
            candidates.pop(0)
            matched.append(ref)
        else:
            missing.append(ref)
    leftover = {id(c) for group in pool.values() for c in group}
    extra = [c for c in calls if c.args is None or id(c) in leftover]
    return matched, missing, extra


def near_misses(missing: list[CallView], extra: list[CallView]) -> list[str]:
    """Missing and extra calls of the same tool, paired in sorted order, with their argument differences."""
    found: list[str] = []
    for name in sorted({c.name for c in missing} & {c.name for c in extra}):
        wanted = sorted((c for c in missing if c.name == name), key=_sort_key)
        got = sorted((c for c in extra if c.name == name), key=_sort_key)
        found += filter(None, (_mismatch(call, ref, exact=True) for ref, call in zip(wanted, got, strict=False)))
    return found


def accuracy(calls: list[CallView], reference: list[CallView], strict_order: bool) -> tuple[float, str]:
    mode = 'strict order' if strict_order else 'any order'
    if not calls and not reference:
        return 1.0, 'both reference and actual calls are empty'
    if not calls or not reference:
        shown = sections(('missing', listing(reference)), ('extra', listing(calls)))
        return 0.0, f'{len(reference)} reference call(s), {len(calls)} actual call(s){shown}'
    if not strict_order:
        calls, reference = sorted(calls, key=_sort_key), sorted(reference, key=_sort_key)
    names, expected = [c.name for c in calls], [r.name for r in reference]
    if names != expected:
        missing, extra = multiset_diff(expected, names)
        detail = sections(('missing tools', counts(missing)), ('unexpected tools', counts(extra)))
        return 0.0, f'tool names not aligned ({mode}): expected {expected!r}, actual {names!r}{detail}'
    pairs = list(zip(calls, reference, strict=True))
    total = sum(_argument_score(call, ref) for call, ref in pairs)
    value = total / len(reference)
    mismatches = [m for call, ref in pairs if (m := _mismatch(call, ref, exact=False)) is not None]
    matched = [ref for call, ref in pairs if _argument_score(call, ref) == 1.0]
    detail = sections(('matched', listing(matched)), ('argument mismatches', '; '.join(sorted(mismatches))))
    return value, f'tool names aligned ({mode}), argument accuracy={total:g}/{len(reference)}={value:.3f}{detail}'
