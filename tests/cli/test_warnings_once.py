"""Each warning of `run` is printed once, however many times the traces are read.

With a dataset, cases that no trace names by `case_name` are decided after a first read of every file,
and their traces are read again: that second read must not repeat the files' warnings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import DATASET, run_cli, traces


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The baseline traces, a stray file, an unmatched trace and a trace stored twice (span warnings)."""
    runs = tmp_path / 'runs'
    runs.mkdir()
    baseline = Path(traces('baseline')).read_text(encoding='utf-8')
    (runs / 'baseline.otlp.jsonl').write_text(baseline, encoding='utf-8')
    (runs / 'again.otlp.jsonl').write_text(baseline.splitlines()[1] + '\n', encoding='utf-8')
    (runs / 'scenario.otlp.jsonl').write_bytes(Path(traces('scenario')).read_bytes())
    (runs / 'notes.txt').write_text('hello\n', encoding='utf-8')
    return runs


@pytest.mark.parametrize('workers', ['1', '2'])
@pytest.mark.parametrize('mode', ['dataset', 'evaluators'])
def test_every_warning_is_printed_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, folder: Path, mode: str, workers: str
) -> None:
    if mode == 'dataset':
        # 'refund' renamed: its case now finds its trace by its inputs, which takes the second read.
        text = DATASET.read_text(encoding='utf-8').replace('- name: refund\n', '- name: refund_by_inputs\n')
        assert 'refund_by_inputs' in text
        dataset = tmp_path / 'dataset.yaml'
        dataset.write_text(text, encoding='utf-8')
        inputs = [str(dataset)]
    else:
        evaluators = tmp_path / 'evaluators.yaml'
        evaluators.write_text('- MaxToolCalls: 6\n', encoding='utf-8')
        inputs = ['--evaluators', str(evaluators)]
    done = run_cli(capsys, 'run', *inputs, str(folder), '--no-progress', '--workers', workers, '--all-rows')
    assert done.code in (0, 1), done.err
    lines = done.err.splitlines()
    assert all(line.startswith('agentic-evals-otel: warning: ') for line in lines), done.err
    assert len(lines) == len(set(lines)), done.err
    assert sum('notes.txt:1: skipped, not a trace file' in line for line in lines) == 1
    assert any('duplicate span id' in line for line in lines)
    if mode == 'dataset':
        assert 'refund_by_inputs' in done.out
        assert sum('matched no case of support_agent' in line for line in lines) == 1
