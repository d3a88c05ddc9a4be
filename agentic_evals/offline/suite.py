"""What `agentic-evals run` scores with: a dataset file, or a file listing only evaluators.

Both are read with pydantic-evals' own dataset loader (an evaluators file is wrapped in a
dataset with no cases), so the YAML syntax is exactly pydantic-evals' and every evaluator type
it knows, plus ours, is available. Everything a user can get wrong in the file surfaces as a
`FileError` naming the file, and the line or the evaluator, instead of a traceback.

Scoring is `offline.scored_cases`: the CLI streams traces through it.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_evals import Dataset
from pydantic_evals.evaluators import Evaluator
from pydantic_evals.evaluators.common import DEFAULT_EVALUATORS

from ..errors import FileError
from ..evaluators.registry import evaluator_types

# PyYAML ships no type stubs; it is only a parser at the file boundary here (pydantic-evals depends on it).
yaml: Any = importlib.import_module('yaml')


EVALUATORS_FILE_KEYS = frozenset({'evaluators', 'name', '$schema'})
# The keys OTLP JSON and Jaeger JSON trace files start with: a trace file given where a dataset belongs.
_TRACE_MARKERS = re.compile(r'^\s*\{\s*"(resourceSpans|data|traceID)"\s*:')


@dataclass(frozen=True)
class Suite:
    """The evaluators to run and, from a dataset file, the cases they run on."""

    name: str
    path: Path
    dataset: Dataset[Any, Any, Any] | None
    """`None` for an evaluators file: every trace is then scored as its own case."""
    evaluators: tuple[Evaluator[Any, Any, Any], ...]
    """Evaluators that run on every case (a dataset's case-level evaluators live on its cases)."""

    def evaluation_names(self) -> set[str]:
        """The result names the evaluators report by default (an evaluator may return other names)."""
        evaluators = [*self.evaluators]
        if self.dataset is not None:
            evaluators += [e for case in self.dataset.cases for e in case.evaluators]
        return {e.get_default_evaluation_name() for e in evaluators}


def load_dataset(path: Path) -> Suite:
    """A pydantic-evals dataset file (YAML or JSON) with our evaluator types registered."""
    data = _read(path)
    if not isinstance(data, dict):
        raise FileError(path, f'expected a dataset (a mapping with `cases:`), got {_kind(data)}')
    _check_names(path, data)
    dataset = _build(path, data)
    if not dataset.cases:
        raise FileError(
            path, 'the dataset has no cases (to score every trace with its evaluators, pass it with --evaluators)'
        )
    return Suite(dataset.name, path, dataset, tuple(dataset.evaluators))


def load_evaluators(path: Path) -> Suite:
    """A file with just an `evaluators:` list in dataset syntax (or a bare list): no cases."""
    data = _read(path)
    if isinstance(data, list):
        data = {'evaluators': data}
    if not isinstance(data, dict) or 'evaluators' not in data:
        raise FileError(path, f'expected an `evaluators:` list, got {_kind(data)}')
    extra = sorted(str(k) for k in data.keys() - EVALUATORS_FILE_KEYS)
    if extra:
        keys = ', '.join(repr(k) for k in extra)
        raise FileError(
            path, f'unexpected key(s) {keys}: --evaluators takes only an `evaluators:` list (pass a dataset as DATASET)'
        )
    if not isinstance(data['evaluators'], list) or not data['evaluators']:
        raise FileError(path, '`evaluators:` must be a non-empty list')
    document = {'name': data.get('name') or path.name.split('.')[0], 'cases': [], 'evaluators': data['evaluators']}
    _check_names(path, document)
    dataset = _build(path, document)
    return Suite(dataset.name, path, None, tuple(dataset.evaluators))


def _read(path: Path) -> object:
    try:
        text = path.read_text(encoding='utf-8')
    except FileNotFoundError:
        raise FileError(path, 'no such file') from None
    except IsADirectoryError:
        raise FileError(path, 'is a directory, not a dataset file') from None
    except OSError as e:
        raise FileError(path, f'cannot read: {e.strerror or e}') from None
    except UnicodeDecodeError as e:
        raise FileError(path, f'not UTF-8 text (byte {e.start}); a trace file? DATASET comes first') from None
    if _TRACE_MARKERS.search(text[:4096]):
        raise FileError(path, 'this is a trace file, not a dataset: DATASET comes first, then TRACES')
    if path.suffix.lower() == '.json':
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise FileError(path, f'invalid JSON: {e.msg} (column {e.colno})', line=e.lineno) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, 'problem_mark', None)
        problem = getattr(e, 'problem', None) or str(e)
        line = mark.line + 1 if mark is not None else None
        raise FileError(path, f'invalid YAML: {problem}', line=line) from None
    if data is None:
        raise FileError(path, 'the file is empty')
    return data


def _kind(data: object) -> str:
    if isinstance(data, dict):
        return 'a mapping'
    if isinstance(data, list):
        return 'a list'
    return 'a string' if isinstance(data, str) else type(data).__name__


def _spec_name(spec: object) -> str | None:
    """The evaluator name of a spec in any of pydantic-evals' short forms: `Name`, `{Name: args}`."""
    if isinstance(spec, str):
        return spec
    if isinstance(spec, dict) and len(spec) == 1:
        key = next(iter(spec))
        return key if isinstance(key, str) else None
    return None


def _known_names() -> list[str]:
    classes = [*evaluator_types(), *DEFAULT_EVALUATORS]
    return list(dict.fromkeys(c.get_serialization_name() for c in classes))


def _check_names(path: Path, data: dict[str, Any]) -> None:
    """Name an unknown evaluator and where it is used, before pydantic-evals' generic message."""
    known = set(_known_names())
    places: list[tuple[str, object]] = [('the dataset evaluators', data.get('evaluators'))]
    cases = data.get('cases')
    for index, case in enumerate(cases if isinstance(cases, list) else []):
        if isinstance(case, dict):
            places.append((f'case {case.get("name", index + 1)!r}', case.get('evaluators')))
    for where, specs in places:
        for spec in specs if isinstance(specs, list) else []:
            name = _spec_name(spec)
            if name is not None and name not in known:
                raise FileError(path, f'unknown evaluator {name!r} in {where} (known: {", ".join(sorted(known))})')


_FAILED_INSTANTIATE = re.compile(r"^Failed to instantiate evaluator '(?P<name>[^']+)' for (?P<where>.+?): ")


def _build(path: Path, data: dict[str, Any]) -> Dataset[Any, Any, Any]:
    try:
        dataset: Dataset[Any, Any, Any] = Dataset[Any, Any, Any].from_dict(
            data, custom_evaluator_types=evaluator_types(), default_name=path.stem
        )
        return dataset
    except ValidationError as e:
        first = e.errors()[0]
        where = '.'.join(str(p) for p in first['loc']) or 'the document'
        more = f' (and {e.error_count() - 1} more)' if e.error_count() > 1 else ''
        raise FileError(path, f'{where}: {first["msg"]}{more}') from None
    except Exception as e:  # ExceptionGroup of evaluator errors (a backport on Python 3.10), or ValueError
        errors: Sequence[BaseException] = getattr(e, 'exceptions', None) or [e]
        raise FileError(path, '; '.join(_evaluator_message(str(x)) for x in errors)) from None


def _evaluator_message(message: str) -> str:
    match = _FAILED_INSTANTIATE.match(message)
    if match is None:
        return message
    where = 'the dataset evaluators' if match['where'] == 'dataset' else match['where']
    return f'evaluator {match["name"]!r} in {where}: bad arguments: {message[match.end() :]}'
