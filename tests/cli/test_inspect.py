"""`agentic-evals-otel inspect`: the extracted trajectory as a tree, as JSON lines, with notes and loader warnings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from agentic_evals import capture, write_otlp_json

from ..real_runs import expected_calls
from . import run_cli, traces

CALL = re.compile(r'call (\d+): (\S+) (ok|failed|deferred)( \((validation|retry|raised)\))?')
LONG_QUERY = 'x' * 300


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('COLUMNS', '250')


def test_scenario_tree(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'inspect', traces('scenario'))
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert re.fullmatch(r'trace [0-9a-f]{32}  scenario \(\d+ spans\)', lines[0])
    found = [m for m in map(CALL.search, lines) if m is not None]
    assert [(m[2], m[3], m[5]) for m in found] == [
        (name, status, stage) for name, status, stage, *_ in expected_calls(True)
    ]
    assert [int(m[1]) for m in found] == list(range(len(found)))
    # the sub-agent sits under the tool call that delegated to it
    ask = next(i for i, line in enumerate(lines) if 'ask_expert ok' in line)
    expert = next(i for i, line in enumerate(lines) if 'agent expert' in line)
    assert expert > ask
    assert lines[expert].index('agent expert') > lines[ask].index('call ')
    assert [line.strip(' │├└─') for line in lines if 'agent ' in line and '──' in line] == [
        line.strip(' │├└─') for line in lines if re.search(r'── agent (main|expert|crasher)  \d', line)
    ]
    assert sum(bool(re.search(r'── agent main  ', line)) for line in lines) == 2  # the first run and its resumption
    assert any(re.search(r'request 0: main_model chat, \d+ in / \d+ out tokens  \d', line) for line in lines)
    assert any('submit_report ok output function  {"title": "Tool spans"' in line for line in lines)
    assert any('run_report_job deferred  {"report": "weekly"}' in line for line in lines)
    assert any('result: ["https://example.com/opentelemetry-genai-tool-spans"]' in line for line in lines)
    footer = done.out.split('└── agent crasher')[1]
    assert re.search(
        r'\n14 model request\(s\): [\d,]+ input / [\d,]+ output tokens; \d+ tool call attempt\(s\)', footer
    )
    assert (
        "scored tool calls: ['search', 'fetch', 'check_status', 'compute', 'search', 'fetch', 'ask_expert', 'lookup',"
        " 'lookup', 'delete_draft']"
    ) in footer


def test_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'inspect', traces('baseline'), '--json')
    assert done.code == 0, done.err
    records = [json.loads(line) for line in done.out.splitlines()]
    assert [r['name'] for r in records] == ['baseline'] * 4  # one file holds the four cases' traces
    refund = records[0]
    assert refund['sources'] == [traces('baseline')]
    assert [c['name'] for c in refund['trajectory']['tool_calls']] == [
        'lookup_order',
        'check_refund_policy',
        'ask_billing',
        'get_payment',
        'issue_refund',
    ]
    assert refund['trajectory']['tool_calls'][0]['arguments'] == {'order_id': 'A100'}
    assert refund['trajectory']['tool_calls'][0]['agent_path'] == ['support']
    assert refund['trajectory']['model_requests'][0]['input_tokens'] > 0
    only = run_cli(capsys, 'inspect', traces('baseline'), '--json', '--trace-id', refund['trace_id'][:6].upper())
    assert [json.loads(line)['trace_id'] for line in only.out.splitlines()] == [refund['trace_id']]


@pytest.fixture
def odd_trace(tmp_path: Path) -> Path:
    """A trace whose root span was not saved (a loader warning) with a tool span extraction skips (a note)."""
    provider = TracerProvider()
    tracer = provider.get_tracer('test')
    agent = {'gen_ai.agent.name': 'helper', 'gen_ai.operation.name': 'invoke_agent'}
    tool = {'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': json.dumps({'query': LONG_QUERY})}
    with (
        capture(provider) as captured,
        tracer.start_as_current_span('request'),
        tracer.start_as_current_span('invoke_agent helper', attributes=agent),
    ):
        with tracer.start_as_current_span('execute_tool search', attributes=tool) as span:
            span.set_status(Status(StatusCode.ERROR))
        with tracer.start_as_current_span('execute_tool seven', attributes={'gen_ai.tool.name': 7}):
            pass
    path = tmp_path / 'odd.otlp.jsonl'
    write_otlp_json([s for s in captured.spans if s.name != 'request'], path)
    return path


def test_notes_warnings_and_full(capsys: pytest.CaptureFixture[str], odd_trace: Path) -> None:
    done = run_cli(capsys, 'inspect', str(odd_trace))
    assert done.code == 0, done.err
    assert re.search(r'call 0: search failed \(raised\)  \{"query": "x+\.\.\.  \d', done.out)
    assert LONG_QUERY not in done.out
    assert "note: span 'execute_tool seven' skipped: gen_ai.tool.name is int 7, not a string" in done.out
    assert re.search(
        rf"warning: {re.escape(str(odd_trace))}:\d+: span [0-9a-f]{{16}} \('invoke_agent helper'\) has parent"
        r' [0-9a-f]{16}, which is not in the trace; it became a root',
        done.out,
    )
    assert "scored tool calls: []\nwith include_failed=True: ['search']" in done.out
    full = run_cli(capsys, 'inspect', str(odd_trace), '--full')
    assert re.sub(r'\s|│', '', full.out).count(LONG_QUERY + '"}') == 1  # whole, though wrapped to the width


def test_loader_warnings_reach_run_too(capsys: pytest.CaptureFixture[str], odd_trace: Path, tmp_path: Path) -> None:
    evaluators = tmp_path / 'e.yaml'
    evaluators.write_text('- MaxToolCalls: 3\n', encoding='utf-8')
    done = run_cli(capsys, 'run', '--evaluators', str(evaluators), str(odd_trace))
    assert done.code == 0
    assert re.fullmatch(
        r'agentic-evals-otel: warning: trace odd \([0-9a-f]{32}\): .*odd\.otlp\.jsonl:\d+: span [0-9a-f]{16}'
        r" \('invoke_agent helper'\) has parent [0-9a-f]{16}, which is not in the trace; it became a root\n",
        done.err,
    )
