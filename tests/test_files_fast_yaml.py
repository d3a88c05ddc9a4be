"""Dataset YAML is parsed by libyaml when PyYAML has it: the same data, item lines, limits and error messages
as PyYAML's pure-Python loader, which words every error."""

from __future__ import annotations

import contextlib
import gc
from pathlib import Path
from typing import Any

import pytest

from agentic_evals import FileError, files
from agentic_evals.offline.suite import load_dataset, load_evaluators

from .offline.test_suite_limits import LAUGHS, MERGES

ROOT = Path(__file__).resolve().parents[1]
SUPPORT = ROOT / 'fixtures' / 'support' / 'dataset.yaml'

pytestmark = pytest.mark.skipif(files._FastLoader is None, reason='PyYAML built without libyaml')

DOCUMENT = """\
# every kind of node the datasets use, and some they might
name: "quoted: name"
defaults: &defaults {agent: support, include_subagents: false}
when: 2024-05-01
numbers: [1, -2, 0x1f, 1_000, 3.5, .inf, -.inf, 1e3]
flags: [yes, no, true, False, ~, null]
text: |
  a block
  scalar
folded: >-
  folded
  text
cases:
- name: a
  inputs: [x, 'y', "z\\n"]
  evaluators:
  - TrajectoryMatch:
      <<: *defaults
      expected_trajectory:
      - lookup_order
      - {name: escalate}
  - MaxToolCalls: 6
- name: b
  inputs: {nested: [[1, 2], [3, [4, 5]]]}
  evaluators: []
"""

BAD = [
    'a: b: c\n',  # libyaml says "in this context", PyYAML "here"
    'a:\n\t- b\n',
    'a: [1, 2\n',
    'a: "\\q"\n',
    '- a\nb: 1\n',
    'a: "x\x07"\n',
    'a: 1\n---\nb: 2\n',
    'cases: &c [*c]\n',
    '&a [*b]\n',
    'name: x\ncases:\n- name: a\n  inputs: 2001-13-45\n',
    'name: x\ncases:\n- ' + '7' * 5000 + '\n',
    'cases: ' + '[' * 5000 + ']' * 5000,
    LAUGHS,
    MERGES,
]


def yaml_error() -> type[Exception]:
    error: type[Exception] = files.yaml.YAMLError
    return error


def _lines_by_path(data: object, lines: dict[int, list[int]], path: str = '') -> dict[str, list[int]]:
    """The item lines of every list in `data`, keyed by where the list is (ids differ between parses)."""
    found: dict[str, list[int]] = {}
    if isinstance(data, list):
        found[path] = lines[id(data)]
    children: Any = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, child in children:
        found |= _lines_by_path(child, lines, f'{path}/{key}')
    return found


WITHOUT_ALIASES = DOCUMENT.replace('<<: *defaults', '<<: {agent: support}').replace('&defaults ', '')


@pytest.mark.parametrize(
    'text', [DOCUMENT, WITHOUT_ALIASES, SUPPORT.read_text(encoding='utf-8')], ids=['document', 'no-alias', 'support']
)
def test_libyaml_builds_the_same_data_and_item_lines_as_the_pure_loader(text: str) -> None:
    pure, pure_lines = files._parse_yaml(files._Loader, text)
    loaders = [files._FastLoader, *([files._ComposingLoader] if '*' not in text else [])]
    for loader in loaders:
        fast, fast_lines = files._parse_yaml(loader, text)
        assert fast == pure
        assert _lines_by_path(fast, fast_lines) == _lines_by_path(pure, pure_lines)
    assert _lines_by_path(pure, pure_lines)  # the comparison compared something


def test_a_document_without_aliases_is_composed_by_libyaml_too() -> None:
    assert files._loader_for(WITHOUT_ALIASES) is files._ComposingLoader
    assert files._loader_for(DOCUMENT) is files._FastLoader  # an alias: composed with the limits on expansion
    assert files._loader_for('a: "5 * 3"\n') is files._FastLoader  # any star, to be safe


@pytest.mark.parametrize('depth', [99, 100, 101, 900, 1500])
def test_libyaml_composing_keeps_the_nesting_limit(tmp_path: Path, depth: int) -> None:
    """Nested past MAX_DEPTH, in flow and in block style, is the same error, on the same line, as before."""
    for text in (
        'cases: ' + '[' * depth + ']' * depth + '\n',
        'cases:\n' + ''.join(f'{" " * i}- \n' for i in range(depth)),
    ):
        path = tmp_path / 'deep.yaml'
        path.write_text(text, encoding='utf-8')
        results = []
        for loader in (files._ComposingLoader, files._FastLoader, files._Loader):
            try:
                files._parse_yaml(loader, text)
                results.append('ok')
            except files.yaml.YAMLError:
                results.append('error')
        assert results == [results[-1]] * 3
        if results[-1] == 'error':
            with pytest.raises(FileError, match=f'invalid YAML: nested more than {files.MAX_DEPTH} levels deep'):
                load_dataset(path)
    assert (depth <= 98) == (results[-1] == 'ok')  # the block text nests two deeper than its dashes


def test_a_dataset_file_is_parsed_by_libyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[object] = []
    parse = files._parse_yaml

    def spy(loader_class: Any, text: str) -> tuple[object, dict[int, list[int]]]:
        used.append(loader_class)
        return parse(loader_class, text)

    monkeypatch.setattr(files, '_parse_yaml', spy)
    load_dataset(SUPPORT)
    assert used == [files._ComposingLoader]  # no alias in it: libyaml composes it too


def test_without_libyaml_the_pure_loader_reads_the_same_suite(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = load_dataset(SUPPORT)
    monkeypatch.setattr(files, '_FastLoader', None)
    monkeypatch.setattr(files, '_ComposingLoader', None)
    pure = load_dataset(SUPPORT)
    assert fast.dataset is not None and pure.dataset is not None
    assert [(c.name, c.inputs, repr(c.evaluators)) for c in fast.dataset.cases] == [
        (c.name, c.inputs, repr(c.evaluators)) for c in pure.dataset.cases
    ]
    assert repr(fast.evaluators) == repr(pure.evaluators)


@pytest.mark.parametrize('text', BAD)
def test_an_error_is_worded_as_the_pure_loader_words_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    path = tmp_path / 'd.yaml'
    path.write_text(text, encoding='utf-8')
    with pytest.raises(FileError) as fast:
        load_dataset(path)
    monkeypatch.setattr(files, '_FastLoader', None)
    monkeypatch.setattr(files, '_ComposingLoader', None)
    with pytest.raises(FileError) as pure:
        load_dataset(path)
    assert str(fast.value) == str(pure.value)
    assert fast.value.line == pure.value.line


def test_an_unknown_evaluator_has_the_same_line_with_either_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / 'e.yaml'
    path.write_text('evaluators:\n- MaxToolCalls: 3\n\n- ToolCorectness: [a]\n', encoding='utf-8')
    with pytest.raises(FileError) as fast:
        load_evaluators(path)
    monkeypatch.setattr(files, '_FastLoader', None)
    with pytest.raises(FileError) as pure:
        load_evaluators(path)
    assert str(fast.value) == str(pure.value)
    assert fast.value.line == 4


@pytest.mark.parametrize('text', [DOCUMENT, 'a: b: c\n'])
def test_the_garbage_collector_runs_again_after_a_parse(text: str) -> None:
    assert gc.isenabled()
    with contextlib.suppress(yaml_error()):
        files._parse_yaml(files._FastLoader, text)
    assert gc.isenabled()
    gc.disable()
    try:
        files._parse_yaml(files._FastLoader, DOCUMENT)
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()
