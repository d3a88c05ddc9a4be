"""Files read one by one into per-trace parts and joined again give exactly what `load_traces` gives.

No Ray here: the parts are pickled, grouped by trace id in any order and joined, as the Ray
engine's shuffle does on the workers, and compared with the local loader on the same files.
"""

from __future__ import annotations

import gzip
import pickle
import random
from pathlib import Path

import pytest

from agentic_evals import FileError, LoadedTrace, load_traces
from agentic_evals.traces._parts import (
    FileOutcome,
    Part,
    expand_files,
    file_warnings,
    first_error,
    join,
    read_file,
    trace_key,
)

from .ray_helpers import FIXTURES, comparable, write_split


def by_parts(*sources: str | Path, seed: int = 0) -> tuple[list[LoadedTrace], list[str]]:
    """The traces as a cluster would load them: one file per task, parts shuffled, joined per trace."""
    warnings: list[str] = []
    specs = expand_files(sources, warnings.append)
    items: list[Part | FileOutcome] = []
    for spec in reversed(specs):  # any order: the join and the keys must not depend on it
        items.extend(pickle.loads(pickle.dumps(item)) for item in read_file(spec))
    random.Random(seed).shuffle(items)
    outcomes = [item for item in items if isinstance(item, FileOutcome)]
    error = first_error(outcomes)
    if error is not None:
        raise error
    warnings.extend(file_warnings(outcomes))
    groups: dict[str, list[Part]] = {}
    for item in items:
        if isinstance(item, Part):
            groups.setdefault(item.trace_id, []).append(item)
    keyed = []
    for parts in groups.values():
        trace = join(parts, warnings.append)
        if trace is not None:
            keyed.append((trace_key(parts, len(specs)), trace))
    return [trace for _, trace in sorted(keyed, key=lambda pair: pair[0])], warnings


def locally(*sources: str | Path) -> tuple[list[LoadedTrace], list[str]]:
    warnings: list[str] = []
    return list(load_traces(*sources, on_warning=warnings.append)), warnings


def test_the_fixtures_in_every_format_load_as_locally() -> None:
    # The same traces in several formats: duplicate span ids across files, warnings naming file and line.
    expected, expected_warnings = locally(FIXTURES)
    got, got_warnings = by_parts(FIXTURES)
    assert [comparable(trace) for trace in got] == [comparable(trace) for trace in expected]
    assert any(trace.warnings for trace in expected)
    assert sorted(got_warnings) == sorted(expected_warnings)


@pytest.mark.parametrize('seed', [1, 2])
def test_traces_split_over_lines_and_files_load_as_locally(tmp_path: Path, seed: int) -> None:
    write_split(tmp_path, files=7, seed=seed)
    expected, _ = locally(tmp_path)
    got, _ = by_parts(str(tmp_path / '*'), seed=seed)
    assert len(expected) > 10
    assert max(len(trace.sources) for trace in expected) > 2
    assert [comparable(trace) for trace in got] == [comparable(trace) for trace in expected]


def test_spans_missing_their_parent_in_one_file_but_not_the_trace_are_no_warning(tmp_path: Path) -> None:
    write_split(tmp_path, files=3)
    got, _ = by_parts(tmp_path)
    assert not any('not in the trace' in warning for trace in got for warning in trace.warnings)
    only, _ = by_parts(tmp_path / 'part-00.otlp.jsonl')
    assert any('not in the trace' in warning for trace in only for warning in trace.warnings)


def test_a_bad_file_is_the_same_error_as_locally(tmp_path: Path) -> None:
    write_split(tmp_path, files=3)
    (tmp_path / 'part-01.otlp.jsonl.gz').write_bytes(gzip.compress(b'{"resourceSpans": [}\n'))
    with pytest.raises(FileError) as local:
        locally(tmp_path)
    with pytest.raises(FileError) as parts:
        by_parts(tmp_path)
    assert str(parts.value) == str(local.value)
    assert str(parts.value).startswith(f'{tmp_path}/part-01.otlp.jsonl.gz:1: invalid JSON')


def test_a_stray_file_is_skipped_with_the_same_warning(tmp_path: Path) -> None:
    write_split(tmp_path, files=2)
    (tmp_path / 'notes.txt').write_text('not a trace\n')
    expected, expected_warnings = locally(tmp_path)
    got, got_warnings = by_parts(tmp_path)
    assert (
        got_warnings
        == expected_warnings
        == [
            f"{tmp_path}/notes.txt:1: skipped, not a trace file (unknown format: text that is not JSON (it starts with 'not a trace\\n'))"
        ]
    )
    assert [comparable(trace) for trace in got] == [comparable(trace) for trace in expected]
