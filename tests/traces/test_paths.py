"""Sources on disk: link loops, paths the system refuses, stray files in a traced folder."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from agentic_evals import FileError, LoadedTrace, load_traces, read_traces

from . import TRACE_B, request, span, write_lines


def load_error(*sources: str | Path) -> FileError:
    with pytest.raises(FileError) as raised:
        read_traces(*sources)
    return raised.value


def traced_folder(root: Path) -> Path:
    write_lines(root / 'runs' / 'a.jsonl', request(span('1', 'a')))
    write_lines(root / 'runs' / 'deeper' / 'b.jsonl', request(span('1', 'b', trace_id=TRACE_B)))
    return root / 'runs'


def names(traces: list[LoadedTrace]) -> list[str]:
    return sorted(node.name for trace in traces for node in trace.tree)


def test_a_symbolic_link_loop_in_a_directory_is_skipped_with_a_warning(tmp_path: Path) -> None:
    runs = traced_folder(tmp_path)
    (runs / 'deeper' / 'up').symlink_to(runs)
    (runs / 'deeper' / 'again').symlink_to(runs / 'deeper')
    notes: list[str] = []

    traces = read_traces(runs, on_warning=notes.append)

    assert names(traces) == ['a', 'b']
    assert notes == [
        f'{runs / "deeper" / "again"}: skipped: a symbolic link loop (it leads back to a directory above it)',
        f'{runs / "deeper" / "up"}: skipped: a symbolic link loop (it leads back to a directory above it)',
    ]


def test_a_recursive_glob_over_branching_link_loops_ends_at_once(tmp_path: Path) -> None:
    runs = traced_folder(tmp_path)
    for name in ('x', 'y', 'z'):  # each level could branch three ways: a plain recursive glob explodes
        (runs / 'deeper' / name).symlink_to(runs)
    notes: list[str] = []

    started = time.perf_counter()
    traces = read_traces(f'{runs}/**/*.jsonl', on_warning=notes.append)

    assert time.perf_counter() - started < 5
    assert names(traces) == ['a', 'b']
    assert len(notes) == 3 and all('symbolic link loop' in note for note in notes)


def test_a_link_to_a_directory_read_elsewhere_is_read_once_without_a_warning(tmp_path: Path) -> None:
    runs = traced_folder(tmp_path)
    (runs / 'latest').symlink_to(runs / 'deeper')
    notes: list[str] = []

    traces = read_traces(runs, on_warning=notes.append)

    assert names(traces) == ['a', 'b']
    assert [trace.warnings for trace in traces] == [(), ()]  # no duplicate span ids: each file read once
    assert notes == []


def test_a_file_linked_twice_is_read_once(tmp_path: Path) -> None:
    runs = traced_folder(tmp_path)
    (runs / 'alias.jsonl').symlink_to(runs / 'a.jsonl')

    traces = read_traces(runs)

    assert names(traces) == ['a', 'b']
    assert all(trace.warnings == () for trace in traces)


def test_broken_links_and_special_files_in_a_directory_are_skipped_with_a_warning(tmp_path: Path) -> None:
    runs = traced_folder(tmp_path)
    (runs / 'gone.jsonl').symlink_to(runs / 'missing.jsonl')
    os.mkfifo(runs / 'pipe.jsonl')  # opening it would block
    notes: list[str] = []

    traces = read_traces(runs, on_warning=notes.append)

    assert names(traces) == ['a', 'b']
    assert notes == [
        f'{runs / "gone.jsonl"}: skipped: a broken symbolic link (or a link loop)',
        f'{runs / "pipe.jsonl"}: skipped: not a regular file',
    ]


def test_a_glob_with_a_link_loop_named_directly(tmp_path: Path) -> None:
    loop = tmp_path / 'loop.jsonl'
    loop.symlink_to(loop)

    error = load_error(loop)

    assert str(error) == f'{loop}: cannot read: Too many levels of symbolic links'


@pytest.mark.parametrize('length', [300, 5000])
def test_a_path_too_long_for_the_system_is_a_one_line_error(length: int, tmp_path: Path) -> None:
    path = tmp_path / ('x' * length) if length == 300 else Path('/'.join(['y' * 200] * (length // 200)))

    for source in (path, f'{path}/*.jsonl', f'{path}/**/*.jsonl'):
        with pytest.raises(FileError) as raised:
            read_traces(source)
        assert '\n' not in str(raised.value)
        assert raised.value.message in ('cannot read: File name too long', 'no files match this pattern')


def test_a_path_with_a_nul_character_is_a_one_line_error() -> None:
    error = load_error('runs/a\x00.jsonl')

    assert error.message == 'not a usable path (it holds a NUL character)'


STRAY = {
    'notes.txt': b'remember to rerun the flaky case\n',
    'ui.json': json.dumps({'name': 'ui', 'version': '1.0.0', 'dependencies': {}}, indent=2).encode(),
    'report.json': json.dumps({'schema': 'agentic-evals/report@1', 'cases': []}).encode() + b'\n',
    'empty.jsonl': b'',
    'numbers.json': b'[1, 2, 3]\n',
    'image.png': b'\x89PNG\r\n\x1a\n' + bytes(64),
}
STRAY_PROBLEMS = {
    'notes.txt': "unknown format: text that is not JSON (it starts with 'remember to rerun the flaky case\\n')",
    'ui.json': "unknown format: a JSON object that is not an OTLP request or a Jaeger export (keys: 'dependencies', 'name', 'version')",
    'report.json': "unknown format: a JSON object that is not an OTLP request or a Jaeger export (keys: 'cases', 'schema')",
    'empty.jsonl': 'empty file',
    'numbers.json': 'unknown format: a number, not an OTLP request or a Jaeger export',
    'image.png': 'unknown format: binary data that is not an OTLP protobuf request',
}


@pytest.mark.parametrize('name', list(STRAY))
def test_a_stray_file_found_in_a_directory_or_by_a_glob_is_skipped_with_a_warning(name: str, tmp_path: Path) -> None:
    runs = traced_folder(tmp_path)
    (runs / name).write_bytes(STRAY[name])

    for source in (runs, f'{runs}/*', f'{runs}/**'):
        notes: list[str] = []
        traces = read_traces(source, on_warning=notes.append)
        assert names(traces) == ['a', 'b']
        [note] = notes
        assert note.startswith(f'{runs / name}')
        assert note.endswith(f'skipped, not a trace file ({STRAY_PROBLEMS[name]})')


@pytest.mark.parametrize('name', list(STRAY))
def test_a_stray_file_named_on_its_own_is_still_an_error(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(STRAY[name])

    error = load_error(path)

    assert error.message == STRAY_PROBLEMS[name]


def test_stray_file_warnings_are_logged_without_a_callback(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    runs = traced_folder(tmp_path)
    (runs / 'notes.txt').write_text('hello\n')

    with caplog.at_level('WARNING', logger='agentic_evals.traces'):
        traces = list(load_traces(runs))

    assert names(traces) == ['a', 'b']
    assert [record.getMessage() for record in caplog.records] == [
        f"{runs / 'notes.txt'}:1: skipped, not a trace file (unknown format: text that is not JSON (it starts with 'hello\\n'))"
    ]


def test_a_trace_file_with_a_bad_line_in_a_directory_is_still_an_error(tmp_path: Path) -> None:
    """Only a file whose first value is no trace format is stray; a broken trace file is not."""
    runs = traced_folder(tmp_path)
    write_lines(runs / 'c.jsonl', request(span('1', 'c')), {'name': 'not a request'})

    error = load_error(runs)

    assert error.path == runs / 'c.jsonl' and error.line == 2


def test_the_project_files_beside_traces_are_skipped_without_a_word(tmp_path: Path) -> None:
    """A folder of traces often holds what made them: generators, pinned packages, installed modules (a
    glob reads what it names, as before)."""
    support = Path(__file__).resolve().parents[2] / 'fixtures' / 'support' / 'baseline.otlp.jsonl'
    (tmp_path / 'run.otlp.jsonl').write_bytes(support.read_bytes())
    for name in ('package.json', 'package-lock.json', 'requirements.txt', 'requirements-dev.txt', 'generate.mjs'):
        (tmp_path / name).write_text('{"name": "x"}\n')
    (tmp_path / 'node_modules' / 'lib').mkdir(parents=True)
    (tmp_path / 'node_modules' / 'lib' / 'tsconfig.json').write_text('{"compilerOptions": {}}\n')
    warnings: list[str] = []
    traces = list(load_traces(tmp_path, on_warning=warnings.append))
    assert traces and warnings == []
