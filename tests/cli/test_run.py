"""`agentic-evals-otel run`: scoring real trace files, the gates, the exit status and the verdict line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_evals.reports.document import SCHEMA, read_document

from . import DATASET, ROOT, SUPPORT_CASES, run_cli, trace_files, traces

REGRESSED_ASSERTIONS = (
    "3 of 13 assertions failed (ArgumentCorrectness on case 'refund', ToolCorrectness on case 'shipping_faq',"
    " ArgumentCorrectness on case 'damaged_escalation')"
)


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    # Table rows are asserted whole: keep rich from wrapping them.
    monkeypatch.setenv('COLUMNS', '250')


def test_baseline_passes(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'run', str(DATASET), traces('baseline'))
    assert done.code == 0, done.err
    assert done.last_line == 'PASS: 4 cases; 13 of 13 assertions passed'
    assert done.err == ''
    for case in SUPPORT_CASES:
        assert case in done.out


def test_regressed_fails_on_assertions_with_their_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'run', str(DATASET), traces('regressed'))
    assert done.code == 1
    assert done.last_line == f'FAIL: {REGRESSED_ASSERTIONS}'
    assert "Tool 'issue_refund' argument mismatch: key 'amount': expected 25.0, got 250.0 (agent 'billing')" in done.out
    assert "unexpected tools: 'check_refund_policy' (x1), 'lookup_order' (x1)" in done.out
    assert "No calls to tool 'escalate' were recorded." in done.out


def test_min_score_gate_on_a_score_average(capsys: pytest.CaptureFixture[str]) -> None:
    failing = run_cli(capsys, 'run', str(DATASET), traces('regressed'), '--min-score', 'TrajectoryMatch=0.8')
    assert failing.code == 1
    assert failing.last_line == f'FAIL: {REGRESSED_ASSERTIONS}; TrajectoryMatch average 0.556 < 0.800'
    # each case below the threshold shows its score and its reason
    assert '0.500 < 0.800' in failing.out
    assert "actual: ['lookup_order', 'lookup_order', 'lookup_order']" in failing.out

    passing = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--min-score', 'TrajectoryMatch=0.8')
    assert passing.code == 0
    assert passing.last_line == 'PASS: 4 cases; 13 of 13 assertions passed; TrajectoryMatch average 1.000 >= 0.800'


def test_a_later_min_score_for_the_same_name_wins(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ['run', str(DATASET), traces('regressed'), '--allow-failures']
    done = run_cli(capsys, *argv, '--min-score', 'TrajectoryMatch=0.9', '--min-score', 'TrajectoryMatch=0.5')
    assert done.code == 0
    assert done.last_line.endswith('; TrajectoryMatch average 0.556 >= 0.500')


def test_allow_failures_passes_but_still_says_what_failed(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'run', str(DATASET), traces('regressed'), '--allow-failures')
    assert done.code == 0
    assert done.last_line == f'PASS: 4 cases; {REGRESSED_ASSERTIONS} (allowed)'


def test_min_score_on_an_assertion_gates_its_pass_rate(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ['run', str(DATASET), traces('regressed'), '--allow-failures', '--min-score', 'ArgumentCorrectness=0.5']
    done = run_cli(capsys, *argv)
    assert done.code == 1
    assert done.last_line == 'FAIL: ArgumentCorrectness pass rate 0.333 < 0.500'


@pytest.mark.parametrize(
    ('limit', 'code', 'summary'),
    [
        ('50%', 1, 'FAIL: fail rate 75.0% (3 of 4 cases) > 50.0%'),
        ('0.75', 0, f'PASS: 4 cases; {REGRESSED_ASSERTIONS} (allowed); fail rate 75.0% (3 of 4 cases) <= 75.0%'),
    ],
)
def test_max_fail_rate(capsys: pytest.CaptureFixture[str], limit: str, code: int, summary: str) -> None:
    done = run_cli(capsys, 'run', str(DATASET), traces('regressed'), '--allow-failures', '--max-fail-rate', limit)
    assert (done.code, done.last_line) == (code, summary)


def test_evaluators_file_scores_every_trace_as_its_own_case(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    evaluators = tmp_path / 'budgets.yaml'
    evaluators.write_text(
        'evaluators:\n- MaxToolCalls: 2\n- TrajectoryMatch: {expected_trajectory: [lookup_order], order: any_order}\n',
        encoding='utf-8',
    )
    report = tmp_path / 'report.json'
    argv = ['run', '--evaluators', str(evaluators), traces('baseline'), '--json', str(report), '--allow-failures']
    done = run_cli(capsys, *argv)
    assert done.code == 0, done.err
    document = read_document(report)
    # cases are named by the root span's case_name attribute, which the support agent's traces carry
    assert [c.name for c in document.cases] == SUPPORT_CASES
    assert document.name == 'budgets'
    refund = document.cases[0]
    assert refund.assertions['MaxToolCalls'].reason == '5 tool call(s), budget=2'
    assert refund.inputs == 'Order A100 arrived broken, I want my money back.'
    assert refund.output == 'Your refund for order A100 is on its way.'
    assert document.averages.assertions == {'MaxToolCalls': 0.75}


def test_evaluators_file_may_be_a_bare_json_list(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    evaluators = tmp_path / 'evaluators.json'
    evaluators.write_text(json.dumps([{'MaxModelRequests': 20}]), encoding='utf-8')
    done = run_cli(capsys, 'run', '--evaluators', str(evaluators), traces('scenario'), '--name', 'nightly')
    assert done.code == 0, done.err
    assert done.last_line == 'PASS: 1 case; 1 of 1 assertions passed'
    assert 'nightly: 1 case(s)' in done.out
    assert 'scenario' in done.out  # no case_name on the root span: the case is named after the file


def test_a_case_without_a_trace_is_a_case_failure(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dataset = tmp_path / 'dataset.yaml'
    dataset.write_text(
        DATASET.read_text(encoding='utf-8').replace('cases:\n', 'cases:\n- name: vanished\n  inputs: hello\n', 1),
        encoding='utf-8',
    )
    done = run_cli(capsys, 'run', str(dataset), traces('baseline'))
    assert done.code == 1
    assert done.last_line == "FAIL: 1 case failed to run ('vanished')"
    assert "no trace found for case 'vanished'" in done.out
    allowed = run_cli(capsys, 'run', str(dataset), traces('baseline'), '--allow-failures')
    assert allowed.code == 0
    assert allowed.last_line == "PASS: 5 cases; 13 of 13 assertions passed; 1 case failed to run ('vanished') (allowed)"


def test_traces_no_case_uses_are_reported_on_stderr(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dataset = tmp_path / 'one.yaml'
    dataset.write_text(
        'name: one\ncases:\n- name: refund\n  inputs: x\nevaluators:\n- MaxToolCalls: 6\n', encoding='utf-8'
    )
    done = run_cli(capsys, 'run', str(dataset), traces('baseline'))
    assert done.code == 0
    assert done.err.startswith('agentic-evals-otel: warning: 3 trace(s) matched no case of one: baseline (')
    assert done.last_line == 'PASS: 1 case; 1 of 1 assertions passed'


def test_quiet_shows_only_failing_results(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'run', str(DATASET), traces('regressed'), '--quiet')
    results = done.out.split('Averages')[0]
    assert 'FAIL' in results
    assert ' pass ' not in results
    assert 'MaxModelRequests' not in results  # it passed on every case


def test_reasons_are_shown_for_failures_and_on_request_for_all(capsys: pytest.CaptureFixture[str]) -> None:
    passing_reason = "called 'get_payment' (x1), 'issue_refund' (x1) (agent 'billing')"
    assert passing_reason not in run_cli(capsys, 'run', str(DATASET), traces('baseline')).out
    assert passing_reason in run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--reasons').out


def test_a_directory_of_traces(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # a directory (recursively) and a glob are trace sources too; the dataset YAML next to them is skipped
    shutil.copy(traces('baseline'), tmp_path / 'baseline.otlp.jsonl')
    shutil.copy(DATASET, tmp_path / 'dataset.yaml')
    done = run_cli(capsys, 'run', str(tmp_path / 'dataset.yaml'), str(tmp_path))
    assert done.code == 0, done.err
    globbed = run_cli(capsys, 'run', str(DATASET), str(trace_files() / 'base*.jsonl'))
    assert globbed.last_line == done.last_line == 'PASS: 4 cases; 13 of 13 assertions passed'


def test_report_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    paths = {kind: tmp_path / f'report.{kind}' for kind in ('json', 'xml', 'md')}
    argv = ['--json', str(paths['json']), '--junit', str(paths['xml']), '--markdown', str(paths['md'])]
    done = run_cli(capsys, 'run', str(DATASET), traces('regressed'), *argv)
    assert done.code == 1
    raw = json.loads(paths['json'].read_text(encoding='utf-8'))
    assert raw['schema'] == SCHEMA
    assert [c['name'] for c in raw['cases']] == SUPPORT_CASES
    assert raw['totals']['failed_assertions'] == 3
    assert paths['xml'].read_text(encoding='utf-8').startswith('<?xml')
    assert paths['md'].read_text(encoding='utf-8').startswith('## ❌ agentic-evals: support_agent — FAIL')


def _env() -> dict[str, str]:
    return {**os.environ, 'PYTHONPATH': os.pathsep.join(filter(None, [str(ROOT), os.environ.get('PYTHONPATH')]))}


@pytest.mark.slow
def test_python_dash_m_in_a_subprocess(tmp_path: Path) -> None:
    report = tmp_path / 'report.json'
    argv = [sys.executable, '-m', 'agentic_evals', 'run', str(DATASET), traces('regressed'), '--json', str(report)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=_env(), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.rstrip().splitlines()[-1] == f'FAIL: {REGRESSED_ASSERTIONS}'
    assert done.stderr == ''  # not a terminal: no progress display
    assert read_document(report).totals.cases == 4


@pytest.mark.slow
def test_console_script_exit_status() -> None:
    script = Path(sys.executable).parent / 'agentic-evals-otel'
    if not script.exists():
        pytest.skip('the console script is not installed in this environment')
    bad = subprocess.run([str(script), 'run', str(DATASET)], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1].startswith('agentic-evals-otel: error: run needs DATASET')
    good = subprocess.run([str(script), 'run', str(DATASET), traces('baseline')], capture_output=True, text=True)
    assert good.returncode == 0, good.stderr


def test_min_score_for_an_evaluator_no_case_ran(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dataset = tmp_path / 'lost.yaml'
    dataset.write_text('cases:\n- name: lost\n  inputs: x\nevaluators:\n- TrajectoryMatch: [a]\n', encoding='utf-8')
    argv = ['run', str(dataset), traces('baseline'), '--allow-failures', '--min-score', 'TrajectoryMatch=0.5']
    done = run_cli(capsys, *argv)
    assert done.code == 1
    assert done.last_line == 'FAIL: TrajectoryMatch: no case produced a value (minimum 0.500)'
