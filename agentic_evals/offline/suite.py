"""What `agentic-evals-otel run` scores with: a dataset file, or a file listing only evaluators.

Both are read with pydantic-evals' own dataset loader (an evaluators file is wrapped in a
dataset with no cases), so the YAML syntax is exactly pydantic-evals' and every evaluator type
it knows, plus ours, is available. Everything a user can get wrong in the file surfaces as a
`FileError` naming the file, and the line or the evaluator, instead of a traceback.

Files are read with limits (`agentic_evals/files.py`), so a small hostile file cannot take the
process down.

Scoring is `offline.scored_cases`: the CLI streams traces through it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_evals import Dataset
from pydantic_evals.evaluators import Evaluator
from pydantic_evals.evaluators.common import DEFAULT_EVALUATORS

from ..errors import FileError, os_reason
from ..evaluators.registry import evaluator_types
from ..files import MAX_DEPTH, decode, parse_json, parse_yaml, read_limited

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

    def expected_results(self) -> dict[str, frozenset[str]] | None:
        """Case name -> the result names its evaluators (the dataset's and its own) report by default;
        `None` without a dataset, where every case runs the same evaluators."""
        if self.dataset is None:
            return None
        shared = [e.get_default_evaluation_name() for e in self.evaluators]
        return {
            case.name: frozenset([*shared, *(e.get_default_evaluation_name() for e in case.evaluators)])
            for case in self.dataset.cases
            if case.name is not None
        }


def load_dataset(path: Path) -> Suite:
    """A pydantic-evals dataset file (YAML or JSON) with our evaluator types registered."""
    data, lines = _read(path)
    if not isinstance(data, dict):
        raise FileError(path, f'expected a dataset (a mapping with `cases:`), got {_kind(data)}')
    _check_names(path, data, lines)
    dataset = _build(path, data)
    if not dataset.cases:
        raise FileError(
            path, 'the dataset has no cases (to score every trace with its evaluators, pass it with --evaluators)'
        )
    return Suite(dataset.name, path, dataset, tuple(dataset.evaluators))


def load_evaluators(path: Path) -> Suite:
    """A file with just an `evaluators:` list in dataset syntax (or a bare list): no cases."""
    data, lines = _read(path)
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
    _check_names(path, document, lines)
    dataset = _build(path, document)
    return Suite(dataset.name, path, None, tuple(dataset.evaluators))


def _read(path: Path) -> tuple[object, dict[int, list[int]]]:
    """The file's data, and the line of each item of each YAML list in it (by the list's `id`)."""
    try:
        text = decode(read_limited(path))
    except FileNotFoundError:
        raise FileError(path, 'no such file') from None
    except IsADirectoryError:
        raise FileError(path, 'is a directory, not a dataset file') from None
    except UnicodeDecodeError as e:
        raise FileError(path, f'not UTF-8 text (byte {e.start}); a trace file? DATASET comes first') from None
    except (OSError, ValueError) as e:  # ValueError: a NUL byte in the path
        raise FileError(path, f'cannot read: {os_reason(e)}') from None
    if _TRACE_MARKERS.search(text[:4096]):
        raise FileError(path, 'this is a trace file, not a dataset: DATASET comes first, then TRACES')
    if path.suffix.lower() == '.json':
        return parse_json(path, text, max_depth=MAX_DEPTH), {}
    data, item_lines = parse_yaml(path, text)
    if data is None:
        raise FileError(path, 'the file is empty')
    return data, item_lines


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


def _check_names(path: Path, data: dict[str, Any], lines: dict[int, list[int]]) -> None:
    """Name an unknown evaluator, where it is used and what was meant, before pydantic-evals' generic message."""
    known = sorted(_known_names())
    places: list[tuple[str, object]] = [('the dataset evaluators', data.get('evaluators'))]
    cases = data.get('cases')
    for index, case in enumerate(cases if isinstance(cases, list) else []):
        if isinstance(case, dict):
            places.append((f'case {case.get("name", index + 1)!r}', case.get('evaluators')))
    for where, specs in places:
        for index, spec in enumerate(specs if isinstance(specs, list) else []):
            name = _spec_name(spec)
            if name is not None and name not in known:
                line = lines[id(specs)][index] if id(specs) in lines else None
                message = f'unknown evaluator {name!r} in {where}{_did_you_mean(name, known)}'
                raise FileError(path, f'{message} (known: {", ".join(known)})', line=line)


def _did_you_mean(name: str, known: Sequence[str]) -> str:
    """`; did you mean 'ToolCorrectness'?` for the closest known name (case ignored), or nothing."""
    lowered = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name.lower(), lowered, n=1, cutoff=0.6)
    return f'; did you mean {lowered[close[0]]!r}?' if close else ''


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
