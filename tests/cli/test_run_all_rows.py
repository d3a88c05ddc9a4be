"""`run` on more than 50 cases prints the failing cases' rows only; `--all-rows` prints every row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from . import DATASET, run_cli, traces

COPIES = 60


def _copies(path: Path) -> Path:
    """`COPIES` copies of the regressed support traces, each under its own trace and span ids."""
    lines = Path(traces('regressed')).read_text(encoding='utf-8').splitlines()
    with path.open('w', encoding='utf-8') as out:
        for copy in range(COPIES):
            request = json.loads(lines[copy % len(lines)])
            for resource in request['resourceSpans']:
                for scope in resource['scopeSpans']:
                    for span in scope['spans']:
                        span['traceId'] = f'{copy + 1:032x}'
                        for key in ('spanId', 'parentSpanId'):
                            if span.get(key):
                                span[key] = f'{int(span[key], 16) + (copy << 32):016x}'
            out.write(json.dumps(request) + '\n')
    return path


def _without_verdict(out: str) -> str:
    return out.rstrip('\n').rsplit('\n', 1)[0]


def test_a_large_run_prints_the_failing_cases_and_all_rows_prints_every_case(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    evaluators = tmp_path / 'evaluators.yaml'
    evaluators.write_text('evaluators:\n- MaxToolCalls: 3\n', encoding='utf-8')
    files = str(_copies(tmp_path / 'many.otlp.jsonl'))
    summary = run_cli(capsys, 'run', '--evaluators', str(evaluators), files, '--no-progress')
    every = run_cli(capsys, 'run', '--evaluators', str(evaluators), files, '--no-progress', '--all-rows')
    assert summary.code == every.code == 1
    assert summary.last_line == every.last_line
    every_table, summary_table = (_without_verdict(outcome.out) for outcome in (every, summary))
    failing = every_table.count('FAIL ')  # one failing MaxToolCalls row per failing case
    assert 0 < failing < COPIES
    assert every_table.count('MaxToolCalls') == COPIES + 1  # every row, and the averages
    assert summary_table.count('MaxToolCalls') == min(failing, 20) + 1
    assert 'the rows of failing cases only' in summary.out
    assert '--all-rows shows every row' in summary.out and '--all-rows' not in every.out


def test_all_rows_changes_nothing_on_a_small_run(capsys: pytest.CaptureFixture[str]) -> None:
    plain = run_cli(capsys, 'run', str(DATASET), traces('regressed'), '--no-progress')
    every = run_cli(capsys, 'run', str(DATASET), traces('regressed'), '--no-progress', '--all-rows')
    assert plain == every
    assert '--all-rows' not in plain.out
