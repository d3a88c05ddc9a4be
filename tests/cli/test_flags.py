"""Flags mean exactly what they say: no abbreviations, percentages where fractions go, no impossible gates."""

from __future__ import annotations

import pytest

from . import DATASET, run_cli, traces


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('COLUMNS', '250')


@pytest.mark.parametrize(
    ('argv', 'meant'),
    [
        (['run', str(DATASET), 'TRACES', '--min-scor', 'TrajectoryMatch=0.8'], '--min-score'),
        (['run', str(DATASET), 'TRACES', '--max-fail', '0.1'], '--max-fail-rate'),
        (['run', str(DATASET), 'TRACES', '--js=report.json'], '--json'),
        (['compare', 'a.json', 'b.json', '--tol', '0.1'], '--tolerance'),
        (['inspect', 'TRACES', '--trace', 'ab'], '--trace-id'),
        (['--vers', 'inspect', 'TRACES'], '--version'),
    ],
    ids=['--min-scor', '--max-fail', '--js=', '--tol', '--trace', '--vers'],
)
def test_an_abbreviated_flag_is_refused_naming_the_flag_meant(
    capsys: pytest.CaptureFixture[str], argv: list[str], meant: str
) -> None:
    argv = [traces('baseline') if a == 'TRACES' else a for a in argv]
    done = run_cli(capsys, *argv)
    assert done.code == 2
    flag = next(a for a in argv if a.startswith('--')).partition('=')[0]
    command = '' if argv[0].startswith('-') else f' {argv[0]}'
    assert (
        done.err.splitlines()[-1] == f'agentic-evals-otel{command}: error: unknown flag {flag} (did you mean {meant}?)'
    )


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


def test_an_unknown_flag_is_one_error_under_the_commands_usage(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--junit-xml', 'x.xml')
    assert done.code == 2
    assert done.out == ''
    assert done.err.splitlines() == [
        'usage: agentic-evals-otel run [options] DATASET TRACES [TRACES ...]',
        '       agentic-evals-otel run [options] --evaluators FILE TRACES [TRACES ...]',
        'agentic-evals-otel run: error: unknown flag --junit-xml (did you mean --junit?)',
    ]


@pytest.mark.parametrize(
    ('argv', 'error'),
    [
        # the unknown flag, not the missing arguments it left behind
        (['run', '--junit-xml'], 'run: error: unknown flag --junit-xml (did you mean --junit?)'),
        (['compare', '--tolerence', '0.1'], 'compare: error: unknown flag --tolerence (did you mean --tolerance?)'),
        (['run', 'd', 't', '--colour', '--jsn=r'], 'run: error: unknown flags --colour, --jsn (did you mean --json?)'),
        # after a flag that takes a value: a negative number is that value; a flag-like word is its missing value
        (
            ['compare', 'a', 'b', '--tolerance', '-1'],
            "compare: error: argument --tolerance: expected a tolerance >= 0, got '-1'",
        ),
        (
            ['compare', 'a', 'b', '--markdown', '-x', '--tolerance=-1'],
            'compare: error: argument --markdown: expected one argument',
        ),
    ],
)
def test_an_unknown_flag_comes_before_the_problems_it_caused(
    capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    done = run_cli(capsys, *argv)
    assert done.code == 2
    usage, *_, last = done.err.splitlines()
    assert usage.startswith(f'usage: agentic-evals-otel {argv[0]} ')
    assert last == f'agentic-evals-otel {error}'


@pytest.mark.parametrize(
    ('argv', 'error'),
    [
        (['rnu', 'x'], 'unknown command rnu (did you mean run?)'),
        (['inpsect', 'x'], 'unknown command inpsect (did you mean inspect?)'),
        (['--version2', 'x'], 'unknown flag --version2 (did you mean --version?)'),
    ],
)
def test_a_misspelt_command_names_the_closest(capsys: pytest.CaptureFixture[str], argv: list[str], error: str) -> None:
    done = run_cli(capsys, *argv)
    assert done.code == 2
    usage, last = done.err.splitlines()
    assert usage == 'usage: agentic-evals-otel [-h] [--version] COMMAND ...'
    assert last.startswith(f'agentic-evals-otel: error: {error}')
