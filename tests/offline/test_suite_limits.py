"""Dataset and evaluators files are read with limits: a small hostile file is a one-line error with its line.

Never a traceback, never a hang: each test runs under an alarm, so a regression that expands a
"billion laughs" file fails here instead of eating the machine.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentic_evals import FileError, files
from agentic_evals.files import MAX_ALIAS_VALUES, MAX_DEPTH, MAX_FILE_BYTES
from agentic_evals.offline.suite import load_dataset, load_evaluators

LAUGHS = '\n'.join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(f'{b}: &{b} [' + ','.join([f'*{a}'] * 9) + ']' for a, b in zip('abcdefgh', 'bcdefghi', strict=True)),
    ]
)
"""The classic: about 480 bytes that expand to 9**9 strings."""

MERGES = '\n'.join(
    [
        'a: &a {' + ', '.join(f'k{i}: {i}' for i in range(9)) + '}',
        *(f'{b}: &{b} {{<<: [' + ', '.join([f'*{a}'] * 9) + ']}' for a, b in zip('abcdefgh', 'bcdefghi', strict=True)),
    ]
)


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    def hung(*_: object) -> None:
        raise AssertionError('reading the file took more than 20 seconds')

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _error(path: Path, text: str | bytes, *, evaluators: bool = False) -> str:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding='utf-8')
    with pytest.raises(FileError) as raised:
        (load_evaluators if evaluators else load_dataset)(path)
    message = str(raised.value)
    assert '\n' not in message
    return message.removeprefix(str(path))


def test_a_billion_laughs_is_refused_where_it_starts(tmp_path: Path) -> None:
    assert len(LAUGHS) < 500
    assert _error(tmp_path / 'd.yaml', LAUGHS) == (
        f':6: invalid YAML: aliases expand the document by more than {MAX_ALIAS_VALUES:,} values'
    )


def test_a_billion_laughs_of_merge_keys_is_refused(tmp_path: Path) -> None:
    assert _error(tmp_path / 'd.yaml', MERGES).endswith(
        f': invalid YAML: aliases expand the document by more than {MAX_ALIAS_VALUES:,} values'
    )


def test_an_alias_inside_its_own_anchor_is_refused(tmp_path: Path) -> None:
    assert (
        _error(tmp_path / 'd.yaml', 'cases: &c [*c]\n') == ':1: invalid YAML: an alias inside its own anchor (a cycle)'
    )


def test_reusing_an_evaluator_list_by_alias_still_works(tmp_path: Path) -> None:
    path = tmp_path / 'd.yaml'
    path.write_text(
        'cases:\n- name: a\n  inputs: x\n  evaluators: &common\n  - MaxToolCalls: 6\n  - ToolCorrectness: [search]\n'
        '- name: b\n  inputs: y\n  evaluators: *common\n',
        encoding='utf-8',
    )
    dataset = load_dataset(path).dataset
    assert dataset is not None
    assert [len(case.evaluators) for case in dataset.cases] == [2, 2]


@pytest.mark.parametrize(
    ('name', 'text', 'message'),
    [
        (
            'flow.yaml',
            'cases: ' + '[' * 5000 + ']' * 5000,
            f':1: invalid YAML: nested more than {MAX_DEPTH} levels deep',
        ),
        (
            'block.yaml',
            ''.join(f'{"  " * i}k{i}:\n' for i in range(MAX_DEPTH + 5)) + '  ' * (MAX_DEPTH + 5) + 'x\n',
            f':{MAX_DEPTH}: invalid YAML: nested more than {MAX_DEPTH} levels deep',
        ),
        ('deep.json', '{"cases": ' + '[' * 5000 + ']' * 5000 + '}', ':1: nested too deeply (5001 levels)'),
        (
            'deep2.json',
            '{"name": "x",\n"cases": ' + '[' * (MAX_DEPTH + 1) + ']' * (MAX_DEPTH + 1) + '}',
            f':2: nested too deeply ({MAX_DEPTH + 2} levels; the limit is {MAX_DEPTH})',
        ),
    ],
)
def test_nesting_beyond_the_limit_is_refused_with_its_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    assert _error(tmp_path / name, text) == message


@pytest.mark.parametrize(
    ('name', 'text', 'message'),
    [
        ('int.json', '{"name": "x",\n "cases": [' + '7' * 5000 + ']}', ':2: an integer with more than 4300 digits'),
        (
            'int.yaml',
            'name: x\ncases:\n- ' + '7' * 5000 + '\n',
            ':3: invalid YAML: an integer with more than 4300 digits',
        ),
        ('neg.json', '{"cases": [-' + '7' * 5000 + ']}', ':1: an integer with more than 4300 digits'),
    ],
)
def test_a_5000_digit_integer_is_refused_with_its_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    assert _error(tmp_path / name, text) == message


def test_digits_in_a_string_are_only_text(tmp_path: Path) -> None:
    path = tmp_path / 'd.yaml'
    path.write_text(f'cases:\n- name: a\n  inputs: "{"7" * 5000}"\n', encoding='utf-8')
    dataset = load_dataset(path).dataset
    assert dataset is not None and dataset.cases[0].inputs == '7' * 5000


def test_a_value_pyyaml_cannot_build_is_an_error_with_its_line(tmp_path: Path) -> None:
    assert _error(tmp_path / 'd.yaml', 'name: x\ncases:\n- name: a\n  inputs: 2001-13-45\n') == (
        ':4: invalid YAML: month must be in 1..12'
    )


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / 'huge.yaml'
    with path.open('wb') as file:
        file.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing is written
    with pytest.raises(FileError) as raised:
        load_dataset(path)
    assert str(raised.value) == f'{path}: too large: {MAX_FILE_BYTES + 1:,} bytes (the limit is 256 MiB)'


def test_a_device_without_a_size_is_read_up_to_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, 'MAX_FILE_BYTES', 2 * 1024 * 1024)
    with pytest.raises(FileError) as raised:
        load_dataset(Path('/dev/zero'))
    assert str(raised.value) == '/dev/zero: too large: more than 2 MiB'


@pytest.mark.parametrize(
    ('name', 'message'),
    [
        ('a' * 300 + '.yaml', ': cannot read: File name too long'),
        ('x/' * 2500 + 'd.yaml', ': cannot read: File name too long'),
    ],
)
def test_an_overlong_path_is_one_line(tmp_path: Path, name: str, message: str) -> None:
    path = tmp_path / name
    with pytest.raises(FileError) as raised:
        load_dataset(path)
    assert str(raised.value) == f'{path}{message}'
