"""`run --min-case-score`, `--max-metric` and `--max-case-metric` on real traces of the support agent."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from . import DATASET, env, run_cli, traces


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('COLUMNS', '250')


def test_a_mean_that_passes_hides_no_case_below_the_per_case_threshold(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ['run', str(DATASET), traces('regressed'), '--allow-failures']
    mean = run_cli(capsys, *argv, '--min-score', 'TrajectoryMatch=0.5')
    assert (mean.code, mean.last_line.split('; ')[-1]) == (0, 'TrajectoryMatch average 0.556 >= 0.500')
    per_case = run_cli(capsys, *argv, '--min-case-score', 'TrajectoryMatch=0.6')
    assert per_case.code == 1
    # refund reports `support_trajectory` instead: its evaluators give no TrajectoryMatch, so it is not asked
    assert per_case.last_line == (
        "FAIL: TrajectoryMatch < 0.600 on 2 of 3 cases ('order_status' 0.500, 'shipping_faq' 0.500)"
    )
    assert 'TrajectoryMatch       0.500 < 0.600' in per_case.out


def test_min_case_score_passes_on_the_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ['run', str(DATASET), traces('baseline'), '--min-case-score', 'TrajectoryMatch=100%']
    done = run_cli(capsys, *argv, '--min-case-score', 'MaxToolCalls=1')
    assert done.code == 0, done.out
    assert done.last_line == (
        'PASS: 4 cases; 13 of 13 assertions passed; TrajectoryMatch >= 1.000 on all 3 cases (lowest 1.000);'
        ' MaxToolCalls >= 1.000 on all 4 cases'
    )


def test_a_case_that_did_not_run_fails_a_per_case_gate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dataset = tmp_path / 'dataset.yaml'
    dataset.write_text(
        DATASET.read_text(encoding='utf-8').replace('cases:\n', 'cases:\n- name: vanished\n  inputs: hello\n', 1),
        encoding='utf-8',
    )
    argv = ['run', str(dataset), traces('baseline'), '--allow-failures', '--min-case-score', 'MaxToolCalls=1']
    done = run_cli(capsys, *argv)
    assert done.code == 1
    assert done.last_line == "FAIL: MaxToolCalls < 1.000 or missing on 1 of 5 cases ('vanished' not run)"


def test_metric_gates_on_the_recorded_usage(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ['run', str(DATASET), traces('baseline')]
    # the baseline's requests per case: refund 7, order_status 2, shipping_faq 2, damaged_escalation 3
    mean = run_cli(capsys, *argv, '--max-metric', 'requests=3.5')
    assert (mean.code, mean.last_line.split('; ')[-1]) == (0, 'requests average 3.5 <= 3.5')
    over = run_cli(capsys, *argv, '--max-metric', 'requests=3')
    assert (over.code, over.last_line) == (1, 'FAIL: requests average 3.5 > 3')
    per_case = run_cli(capsys, *argv, '--max-case-metric', 'requests=3', '--max-case-metric', 'input_tokens=10000')
    assert per_case.code == 1
    assert per_case.last_line == "FAIL: requests > 3 on 1 of 4 cases ('refund' 7)"
    assert 'requests              7 > 3' in per_case.out


def test_duration_gates(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ['run', str(DATASET), traces('baseline'), '--max-metric', 'duration=60', '--max-case-metric', 'duration=60']
    done = run_cli(capsys, *argv)
    assert done.code == 0, done.out
    mean, per_case = done.last_line.split('; ')[-2:]
    assert mean.startswith('duration average ') and mean.endswith(' ms <= 60 s')
    assert per_case.startswith('duration <= 60 s on all 4 cases (highest ') and per_case.endswith(' ms)')
    failing = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--max-case-metric', 'duration=0')
    assert failing.code == 1
    assert failing.last_line.startswith("FAIL: duration > 0 µs on 4 of 4 cases ('refund' ")


def test_cost_not_recorded_fails_rather_than_passes(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--max-metric', 'cost=0.5')
    assert (done.code, done.last_line) == (1, 'FAIL: cost: no case recorded a value (maximum 0.5)')
    per_case = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--max-case-metric', 'cost=0.5')
    assert per_case.last_line == (
        "FAIL: cost > 0.5 or missing on 4 of 4 cases ('refund' not recorded, 'order_status' not recorded,"
        " 'shipping_faq' not recorded, and 1 more)"
    )


@pytest.mark.parametrize(
    ('flag', 'value', 'message'),
    [
        (
            '--max-metric',
            'input_token=5',
            "--max-metric input_token: no metric is named 'input_token' (available: cost, duration, input_tokens,"
            ' output_tokens, requests, total_tokens)',
        ),
        (
            '--min-case-score',
            'TrajectoryMach=0.5',
            "--min-case-score TrajectoryMach: no score or assertion is named 'TrajectoryMach' (available:"
            ' ArgumentCorrectness, MaxModelRequests, MaxToolCalls, ToolCorrectness, TrajectoryMatch, billing_tools,'
            ' support_trajectory)',
        ),
        ('--max-case-metric', 'requests=-1', 'argument --max-case-metric: expected a limit >= 0'),
        ('--max-metric', 'requests', "argument --max-metric: expected NAME=X (e.g. input_tokens=5000), got 'requests'"),
        ('--max-metric', 'requests=10%', "argument --max-metric: '10%' is not a number"),
        ('--min-case-score', 'TrajectoryMatch=2', 'argument --min-case-score: expected a threshold between 0 and 1'),
    ],
)
def test_bad_gates_are_usage_errors_in_one_line(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    done = run_cli(capsys, 'run', str(DATASET), traces('baseline'), flag, value)
    assert done.code == 2
    last = done.err.strip().splitlines()[-1]
    assert last.startswith('agentic-evals-otel') and ': error: ' in last  # `agentic-evals-otel run: ...` from argparse
    assert message in last


def test_the_reports_show_the_per_case_gates(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    junit, markdown = tmp_path / 'junit.xml', tmp_path / 'summary.md'
    argv = ['run', str(DATASET), traces('regressed'), '--allow-failures', '--junit', str(junit)]
    done = run_cli(capsys, *argv, '--markdown', str(markdown), '--min-case-score', 'TrajectoryMatch=0.6')
    assert done.code == 1
    root = ET.parse(junit).getroot()
    results, gates = root
    failed = {(c.get('classname'), c.get('name')) for c in results if c.find('failure') is not None}
    assert failed == {('order_status', 'TrajectoryMatch'), ('shipping_faq', 'TrajectoryMatch')}
    assert [(c.get('name'), c.find('failure') is not None) for c in gates][-1] == (
        'min-case-score TrajectoryMatch',
        True,
    )
    lines = markdown.read_text(encoding='utf-8').splitlines()
    assert '| TrajectoryMatch | score | 0.556 | ❌ 2 case(s) < 0.600 |' in lines


@pytest.mark.slow
def test_per_case_gates_in_a_subprocess(tmp_path: Path) -> None:
    argv = [sys.executable, '-m', 'agentic_evals', 'run', str(DATASET), traces('regressed'), '--allow-failures']
    argv += ['--max-case-metric', 'requests=5', '--min-case-score', 'ArgumentCorrectness=1']
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env(), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.rstrip().splitlines()[-1] == (
        "FAIL: ArgumentCorrectness < 1.000 on 2 of 3 cases ('refund' failed, 'damaged_escalation' failed);"
        " requests > 5 on 1 of 4 cases ('refund' 6)"
    )
