"""Without the `ray` extra, `--engine ray` (and `run_ray` from Python) says in one line what to install."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentic_evals import MaxToolCalls, evaluate_trace_files
from agentic_evals.cli import main

from .ray_helpers import FIXTURES

INSTALL = "--engine ray needs Ray: pip install 'agentic-evals-otel[ray]'"


@pytest.fixture
def no_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    """`import ray` fails, as where the extra is not installed."""
    for name in list(sys.modules):
        if name == 'ray' or name.startswith('ray.'):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, 'ray', None)


def test_the_command_says_which_extra_to_install(
    no_ray: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    budgets = tmp_path / 'budgets.yaml'
    budgets.write_text('evaluators:\n  - MaxToolCalls: 3\n')
    status = main(['run', '--evaluators', str(budgets), str(FIXTURES / 'support'), '--engine', 'ray'])
    assert status == 2
    assert capsys.readouterr().err == f'agentic-evals-otel: error: {INSTALL}\n'


def test_python_says_which_extra_to_install(no_ray: None) -> None:
    from agentic_evals import AgenticEvalsError

    with pytest.raises(AgenticEvalsError) as raised:
        evaluate_trace_files(str(FIXTURES / 'support'), evaluators=[MaxToolCalls(3)], engine='ray')
    assert str(raised.value) == INSTALL
