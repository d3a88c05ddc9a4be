"""Flags mean exactly what they say: no abbreviations, percentages where fractions go, no impossible gates."""

from __future__ import annotations

import pytest

from . import DATASET, run_cli, traces


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('COLUMNS', '250')


@pytest.mark.parametrize(
    'argv',
    [
        ['run', str(DATASET), 'TRACES', '--min-scor', 'TrajectoryMatch=0.8'],
        ['run', str(DATASET), 'TRACES', '--max-fail', '0.1'],
        ['run', str(DATASET), 'TRACES', '--js=report.json'],
        ['compare', 'a.json', 'b.json', '--tol', '0.1'],
        ['inspect', 'TRACES', '--trace', 'ab'],
        ['--vers', 'inspect', 'TRACES'],
    ],
    ids=['--min-scor', '--max-fail', '--js=', '--tol', '--trace', '--vers'],
)
def test_an_abbreviated_flag_is_refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    argv = [traces('baseline') if a == 'TRACES' else a for a in argv]
    done = run_cli(capsys, *argv)
    assert done.code == 2
    flag = next(a for a in argv if a.startswith('--'))
    assert f'error: unrecognized arguments: {flag}' in done.err.splitlines()[-1]


@pytest.mark.parametrize(
    ('threshold', 'status', 'verdict'),
    [
        ('90%', 0, 'TrajectoryMatch average 1.000 >= 0.900'),
        ('100%', 0, 'TrajectoryMatch average 1.000 >= 1.000'),
        ('0', 0, 'TrajectoryMatch average 1.000 >= 0.000'),
        ('1', 0, 'TrajectoryMatch average 1.000 >= 1.000'),
    ],
)
def test_min_score_takes_a_fraction_or_a_percentage(
    capsys: pytest.CaptureFixture[str], threshold: str, status: int, verdict: str
) -> None:
    done = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--min-score', f'TrajectoryMatch={threshold}')
    assert done.code == status, done.err
    assert done.last_line.endswith(verdict)


def test_a_percentage_gates_a_pass_rate_too(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(
        capsys, 'run', str(DATASET), traces('regressed'), '--allow-failures', '--min-score', 'ArgumentCorrectness=50%'
    )
    assert done.code == 1
    assert done.last_line == 'FAIL: ArgumentCorrectness pass rate 0.333 < 0.500'


@pytest.mark.parametrize('threshold', ['1.5', '-0.1', '150%', '-5%', '1.0001'])
def test_an_impossible_gate_is_a_usage_error(capsys: pytest.CaptureFixture[str], threshold: str) -> None:
    done = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--min-score', f'TrajectoryMatch={threshold}')
    assert done.code == 2
    assert done.out == ''
    assert done.err.splitlines()[-1] == (
        'agentic-evals-otel run: error: argument --min-score: expected a threshold between 0 and 1 (or a percentage),'
        f" as scores and pass rates are, got 'TrajectoryMatch={threshold}'"
    )
