"""Datasets written to YAML or JSON load our evaluators back, in the short and the long form."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_evals.evaluators import Evaluator

import agentic_evals
from agentic_evals import (
    ArgumentCorrectness,
    MaxModelRequests,
    MaxToolCalls,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCorrectness,
    TrajectoryMatch,
    evaluator_types,
)

from . import read_dataset, write_dataset

SHORT: list[Evaluator[object, object, object]] = [
    ToolCorrectness(['search', 'fetch']),
    TrajectoryMatch(['search', 'fetch']),
    MaxToolCalls(5),
    MaxModelRequests(3),
]
LONG: list[Evaluator[object, object, object]] = [
    ToolCorrectness(['search'], allow_extra=True, include_failed=True, agent='expert', include_subagents=False),
    TrajectoryMatch(['search', 'fetch'], order='any_order', evaluation_name='order'),
    ArgumentCorrectness('search', {'q': 'x', 'n': [1, 2]}, match_mode='exact', occurrence=2),
    MaxToolCalls(5, include_failed=False, agent='main'),
    MaxModelRequests(3, include_subagents=False, conversation='output'),
    ToolCallAccuracy([{'name': 'search', 'args': {'q': 'x'}}], strict_order=False, conversation='inputs'),
    ToolCallF1([{'name': 'search', 'args': {}}], include_failed=True),
]


@pytest.mark.parametrize('suffix', ['.yaml', '.json'])
@pytest.mark.parametrize('evaluators', [SHORT, LONG], ids=['short', 'long'])
def test_round_trip(tmp_path: Path, suffix: str, evaluators: list[Evaluator[object, object, object]]) -> None:
    path = tmp_path / f'dataset{suffix}'
    write_dataset(path, evaluators)
    loaded = read_dataset(path)
    assert loaded.evaluators == evaluators
    assert all(type(e).__module__.startswith('agentic_evals.') for e in loaded.evaluators)


def test_short_form_is_written_when_only_the_main_argument_is_set(tmp_path: Path) -> None:
    path = tmp_path / 'dataset.yaml'
    write_dataset(path, SHORT)
    text = path.read_text()
    assert '- ToolCorrectness:\n  - search\n  - fetch\n' in text
    assert '- MaxToolCalls: 5\n' in text


def test_hand_written_yaml_loads_ours_over_the_builtins(tmp_path: Path) -> None:
    path = tmp_path / 'dataset.yaml'
    path.write_text(
        'name: d\ncases:\n- name: c\n  inputs: x\n'
        'evaluators:\n'
        '- ToolCorrectness: [search, fetch]\n'
        '- TrajectoryMatch:\n    expected_trajectory: [search]\n    order: exact\n    agent: expert\n'
        '- ArgumentCorrectness: {tool_name: search, expected_arguments: {q: x}}\n'
    )
    loaded = read_dataset(path)
    assert loaded.evaluators == [
        ToolCorrectness(['search', 'fetch']),
        TrajectoryMatch(['search'], order='exact', agent='expert'),
        ArgumentCorrectness('search', {'q': 'x'}),
    ]


def test_registry_lists_every_public_evaluator() -> None:
    public = {
        obj
        for name in agentic_evals.__all__
        if isinstance(obj := getattr(agentic_evals, name), type) and issubclass(obj, Evaluator)
    }
    assert set(evaluator_types()) == public


def test_public_api_is_sorted_and_complete() -> None:
    assert list(agentic_evals.__all__) == sorted(agentic_evals.__all__)
    assert sorted(agentic_evals._EXPORTS) == list(agentic_evals.__all__)  # the lazy table and __all__ agree
    for name in agentic_evals.__all__:
        assert hasattr(agentic_evals, name)


def test_the_public_names_are_listed_once() -> None:
    """`__init__.py`'s `TYPE_CHECKING` re-exports are the one list: the lazy table and `__all__` are read
    from it, and no other list of the names is written there."""
    import importlib
    from pathlib import Path

    source = Path(agentic_evals.__file__).read_text(encoding='utf-8')
    block = source.partition('\nif TYPE_CHECKING:\n')[2].partition('\n\n')[0].splitlines()
    assert len(block) == len(agentic_evals.__all__)
    for name, module in agentic_evals._EXPORTS.items():
        assert f'    from {module} import {name} as {name}' in block
        assert f"'{name}'" not in source and f'"{name}"' not in source
        assert hasattr(importlib.import_module(module, 'agentic_evals'), name)


def test_no_public_name_is_shadowed_by_a_submodule() -> None:
    """Importing `agentic_evals.x` sets the package attribute `x` to the module, hiding a lazy name `x`."""
    import importlib
    import pkgutil

    submodules = {m.name for m in pkgutil.iter_modules(agentic_evals.__path__)}
    assert submodules.isdisjoint(agentic_evals.__all__)
    importlib.import_module('agentic_evals.capturing')

    assert callable(agentic_evals.capture) and not isinstance(agentic_evals.capture, type(agentic_evals))
