"""`run --group-by conversation` and matching cases by their first user message, on the committed chats."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_evals.reports.document import read_document

from . import ROOT, env, run_cli

FOLDER = ROOT / 'fixtures' / 'conversations'
CHATS = str(FOLDER / 'chats.otlp.jsonl')
DATASET = str(FOLDER / 'dataset.yaml')


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('COLUMNS', '250')


def test_a_dataset_scores_whole_chats_found_by_their_first_message(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'run', DATASET, CHATS, '--group-by', 'conversation')
    assert done.code == 0, done.out + done.err
    assert done.last_line == 'PASS: 3 cases; 3 of 3 assertions passed'
    assert done.err == ''  # every trace was used


def test_without_grouping_the_turns_of_a_chat_are_ambiguous(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'run', DATASET, CHATS)
    assert done.code == 2
    assert done.err.strip() == (
        "agentic-evals-otel: error: case 'refund' matches 2 traces by first user message:"
        ' chats (00c00000000000000000000000000001), chats (00c00000000000000000000000000003);'
        " case 'status' matches 2 traces by first user message: chats (00c00000000000000000000000000002),"
        ' chats (00c00000000000000000000000000005)'
        ' (pass the traces of one run, or group turns with --group-by conversation)'
    )


def test_a_case_scored_on_its_first_turn_alone(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # a case naming the first turn's trace id scores that turn only: the refund comes in turn 2
    dataset = tmp_path / 'first.yaml'
    dataset.write_text(
        'cases:\n- name: refund\n  inputs: Where is order A100?\n'
        '  metadata: {trace_id: 00c00000000000000000000000000001}\n'
        'evaluators:\n- TrajectoryMatch: [lookup_order, refund]\n',
        encoding='utf-8',
    )
    turn = run_cli(capsys, 'run', str(dataset), CHATS, '--min-case-score', 'TrajectoryMatch=1')
    assert turn.code == 1
    assert turn.last_line == "FAIL: TrajectoryMatch < 1.000 on 1 of 1 case ('refund' 0.667)"
    # turn 2 shares the first message, but the trace id rule found the case's trace first: it is not used
    assert turn.err == (
        'agentic-evals-otel: warning: 3 trace(s) matched no case of first: chats (00c00000000000000000000000000002),'
        ' chats (00c00000000000000000000000000004), chats (00c00000000000000000000000000005)\n'
    )
    chat = run_cli(
        capsys, 'run', str(dataset), CHATS, '--group-by', 'conversation', '--min-case-score', 'TrajectoryMatch=1'
    )
    assert chat.code == 0, chat.out
    assert chat.last_line.endswith('TrajectoryMatch >= 1.000 on 1 case (lowest 1.000)')
    assert chat.err.startswith('agentic-evals-otel: warning: 2 trace(s) matched no case of first: chats (')


def test_every_chat_is_a_case_with_evaluators(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    evaluators = tmp_path / 'budgets.yaml'
    evaluators.write_text('evaluators:\n- MaxToolCalls: 1\n', encoding='utf-8')
    report = tmp_path / 'report.json'
    argv = ['run', '--evaluators', str(evaluators), CHATS, '--group-by', 'conversation', '--json', str(report)]
    done = run_cli(capsys, *argv, '--max-case-metric', 'requests=3')
    assert done.code == 1
    assert done.last_line == (
        "FAIL: 1 of 3 assertions failed (MaxToolCalls on case 'chat-refund'); requests > 3 on 1 of 3 cases"
        " ('chat-refund' 4)"
    )
    document = read_document(report)
    assert [(c.name, c.metrics['requests']) for c in document.cases] == [
        ('chats', 2),
        ('chat-refund', 4),
        ('chat-status', 3),
    ]
    raw = json.loads(report.read_text(encoding='utf-8'))
    assert raw['cases'][1]['metadata']['conversation_id'] == 'chat-refund'
    assert raw['cases'][1]['output'] == 'Refunded 25.00 EUR for order A100.'


def test_group_by_takes_only_conversation(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'run', DATASET, CHATS, '--group-by', 'session')
    assert done.code == 2
    assert "argument --group-by: invalid choice: 'session'" in done.err


@pytest.mark.slow
def test_grouping_in_a_subprocess(tmp_path: Path) -> None:
    argv = [sys.executable, '-m', 'agentic_evals', 'run', DATASET, CHATS, '--group-by', 'conversation']
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().splitlines()[-1] == 'PASS: 3 cases; 3 of 3 assertions passed'


def test_inspect_names_the_conversation_a_trace_belongs_to(capsys: pytest.CaptureFixture[str]) -> None:
    """So a user can see beforehand what `--group-by conversation` will merge."""
    done = run_cli(capsys, 'inspect', CHATS)
    assert done.code == 0, done.err
    shown = [line for line in done.out.splitlines() if line.startswith('conversation: ')]
    # in file order: both chats' first turns, the refund's second, a trace with none, the status's second
    assert shown == [f'conversation: {c}' for c in ('chat-refund', 'chat-status', 'chat-refund', 'chat-status')]
    done = run_cli(capsys, 'inspect', '--json', CHATS)
    assert done.code == 0, done.err
    ids = [json.loads(line)['conversation_id'] for line in done.out.splitlines()]
    assert ids == ['chat-refund', 'chat-status', 'chat-refund', None, 'chat-status']
