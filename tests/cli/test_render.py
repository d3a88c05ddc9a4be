"""`render REPORT.json --html PATH`, and `run --html PATH`: the HTML report from the command line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from agentic_evals.views.html_page import read_payload

from . import ROOT, run_cli

SUPPORT = ROOT / 'fixtures' / 'support'
REGRESSED_VERDICT = (
    "FAIL: 3 of 13 assertions failed (ArgumentCorrectness on case 'refund', ToolCorrectness on case"
    " 'shipping_faq', ArgumentCorrectness on case 'damaged_escalation')"
)


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, *flags: str, variant: str = 'regressed') -> Path:
    """`run` on the support fixture with `--json` (and `flags`); the report's path."""
    report = tmp_path / f'{variant}.json'
    dataset, traces = str(SUPPORT / 'dataset.yaml'), str(SUPPORT / f'{variant}.otlp.jsonl')
    done = run_cli(capsys, 'run', dataset, traces, '--json', str(report), '--no-progress', *flags)
    assert done.code in (0, 1), done.err
    return report


def _payload(path: Path) -> Any:
    return read_payload(path.read_text(encoding='utf-8'))


def test_render_draws_what_run_drew(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ran = tmp_path / 'run.html'
    report = _run(capsys, tmp_path, '--html', str(ran))
    rendered = tmp_path / 'render.html'
    done = run_cli(capsys, 'render', str(report), '--html', str(rendered))
    assert (done.code, done.out, done.err) == (1, REGRESSED_VERDICT + '\n', '')
    assert rendered.read_text(encoding='utf-8') == ran.read_text(encoding='utf-8')
    assert _payload(rendered)['verdict']['summary'] == REGRESSED_VERDICT


@pytest.mark.parametrize(
    'gates',
    [
        ['--allow-failures'],
        ['--min-score', 'TrajectoryMatch=0.5', '--max-fail-rate', '80%'],
        ['--allow-failures', '--min-score', 'support_trajectory=0.9'],
        ['--allow-failures', '--max-metric', 'requests=3', '--max-case-metric', 'duration=1'],
        ['--allow-failures', '--min-case-score', 'MaxToolCalls=1'],
        # only the refund case's evaluators give these: the report records it, so no other case is asked
        ['--allow-failures', '--min-case-score', 'billing_tools=1'],
        ['--allow-failures', '--min-case-score', 'support_trajectory=0.8'],
    ],
    ids=lambda g: ' '.join(g),
)
def test_the_gate_flags_give_the_verdict_run_gives(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, gates: list[str]
) -> None:
    report = _run(capsys, tmp_path)
    ran = run_cli(capsys, 'run', str(SUPPORT / 'dataset.yaml'), str(SUPPORT / 'regressed.otlp.jsonl'), *gates)
    page = tmp_path / 'gated.html'
    rendered = run_cli(capsys, 'render', str(report), '--html', str(page), *gates)
    assert (rendered.code, rendered.last_line) == (ran.code, ran.last_line)
    verdict = _payload(page)['verdict']
    assert verdict['summary'] == ran.last_line
    assert verdict['passed'] is (ran.code == 0)


def test_a_passing_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    report = _run(capsys, tmp_path, variant='baseline')
    page = tmp_path / 'baseline.html'
    done = run_cli(capsys, 'render', str(report), '--html', str(page), '--min-score', 'TrajectoryMatch=0.9')
    assert done.code == 0
    assert done.out.startswith('PASS: 4 cases; 13 of 13 assertions passed; TrajectoryMatch average 1.000 >= 0.900')
    assert _payload(page)['totals']['failed'] == 0


def test_render_and_run_share_the_gate_options(capsys: pytest.CaptureFixture[str]) -> None:
    def gate_options(command: str) -> list[str]:
        help_text = run_cli(capsys, command, '--help').out
        section = help_text.split('\ngates:\n', 1)[1].split('\n\n', 1)[0]
        return re.findall(r'^  (--[\w-]+)', section, flags=re.MULTILINE)

    assert (
        gate_options('render')
        == gate_options('run')
        == [
            '--allow-failures',
            '--min-score',
            '--min-case-score',
            '--max-fail-rate',
            '--max-metric',
            '--max-case-metric',
        ]
    )


@pytest.mark.parametrize(
    ('content', 'message'),
    [
        (None, 'cannot read: No such file or directory'),
        ('', 'the file is empty'),
        ('{', 'invalid JSON'),
        ('[]', 'expected a JSON object with "schema": "agentic-evals/report@1", got list'),
        ('{"schema": "other"}', 'expected "schema": "agentic-evals/report@1", got \'other\''),
    ],
)
def test_a_bad_or_missing_report_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str | None, message: str
) -> None:
    report = tmp_path / 'report.json'
    if content is not None:
        report.write_text(content, encoding='utf-8')
    page = tmp_path / 'report.html'
    done = run_cli(capsys, 'render', str(report), '--html', str(page))
    assert done.code == 2 and done.out == ''
    assert done.err.startswith(f'agentic-evals-otel: error: {report}')
    assert message in done.err and done.err.count('\n') == 1
    assert not page.exists()


def test_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    report = _run(capsys, tmp_path)
    done = run_cli(capsys, 'render', str(report))
    assert done.code == 2
    assert done.err.splitlines()[-1] == 'agentic-evals-otel render: error: the following arguments are required: --html'
    missing = tmp_path / 'no' / 'report.html'
    done = run_cli(capsys, 'render', str(report), '--html', str(missing))
    assert (done.code, done.err) == (
        2,
        f'agentic-evals-otel: error: {missing}: cannot write: directory {missing.parent} does not exist\n',
    )
    done = run_cli(capsys, 'render', str(report), '--html', str(tmp_path / 'r.html'), '--min-score', 'Typo=0.5')
    assert done.code == 2
    assert done.err.startswith("agentic-evals-otel: error: --min-score Typo: no score or assertion is named 'Typo'")
    assert not (tmp_path / 'r.html').exists()


def test_run_checks_the_html_path_before_scoring(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / 'no' / 'report.html'
    done = run_cli(
        capsys, 'run', str(SUPPORT / 'dataset.yaml'), str(SUPPORT / 'regressed.otlp.jsonl'), '--html', str(missing)
    )
    assert (done.code, done.out) == (2, '')
    assert (
        done.err == f'agentic-evals-otel: error: {missing}: cannot write: directory {missing.parent} does not exist\n'
    )


def test_run_html_with_case_failures(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A case whose trace is missing is a failed case with its error, and no results."""
    dataset = tmp_path / 'dataset.yaml'
    text = (SUPPORT / 'dataset.yaml').read_text(encoding='utf-8')
    dataset.write_text(text.replace('cases:\n', 'cases:\n- name: ghost\n  inputs: nobody asked this\n', 1))
    page = tmp_path / 'report.html'
    done = run_cli(capsys, 'run', str(dataset), str(SUPPORT / 'regressed.otlp.jsonl'), '--html', str(page))
    assert done.code == 1
    data = _payload(page)
    assert data['totals']['case_failures'] == 1
    ghost = next(c for c in data['cases'] if c['n'] == 'ghost')
    assert ghost['s'] == 'fail' and ghost['R'] == [] and 'no trace' in ghost['F'].lower()
