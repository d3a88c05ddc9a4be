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
from . import ROOT, run_cli, traces

FRAMEWORKS = ROOT / 'fixtures' / 'frameworks'

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
    # one file holds the four cases' traces: named by their roots' case_name as `run` names them
    names = [r['name'] for r in records]
    assert names[0] == 'refund' and len(set(names)) == 4 and 'baseline' not in names
    assert len({r['trace_id'] for r in records}) == 4
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


HOSTILE = {
    'osc': '\x1b]0;owned\x07',
    'csi': '\x1b[2J',
    'c1': '\x9b2J',
    'bidi': '\u202e',
}


@pytest.fixture
def hostile_trace(tmp_path: Path) -> Path:
    """A trace whose tool name, arguments, result and agent name carry escapes and rich markup, without a case_name."""
    provider = TracerProvider()
    tracer = provider.get_tracer('test')
    text = ''.join(HOSTILE.values())
    with capture(provider) as captured:
        agent = {'gen_ai.agent.name': f'[bold red]agent{text}[/x]', 'gen_ai.operation.name': 'invoke_agent'}
        with tracer.start_as_current_span('invoke_agent x', attributes=agent):
            tool = {
                'gen_ai.tool.name': f'[bold red]tool[/bold red][/x]{text}',
                'gen_ai.tool.call.arguments': json.dumps({'q': text}, ensure_ascii=False),
                'gen_ai.tool.call.result': f'result{text}[/x]',
            }
            with tracer.start_as_current_span('execute_tool t', attributes=tool):
                pass
            bad = {'gen_ai.tool.name': 'bad', 'gen_ai.tool.call.arguments': f'not json {text}'}
            with tracer.start_as_current_span('execute_tool bad', attributes=bad):
                pass
    path = tmp_path / 'hostile.otlp.jsonl'
    write_otlp_json(captured.spans, path)
    return path


@pytest.mark.parametrize('full', [False, True])
def test_text_from_traces_is_shown_as_text(capsys: pytest.CaptureFixture[str], hostile_trace: Path, full: bool) -> None:
    done = run_cli(capsys, 'inspect', str(hostile_trace), *(['--full'] if full else []))
    assert done.code == 0, done.err
    for char in ('\x1b', '\x07', '\x9b', '\u202e'):
        assert char not in done.out
    assert '\\x1b]0;owned\\x07\\x1b[2J\\x9b2J\\u202e' in done.out  # escaped, readable
    assert '[bold red]tool[/bold red][/x]' in done.out  # markup shown, never interpreted
    assert '[bold red]agent' in done.out and 'result' in done.out
    assert 'trace ' in done.out and 'hostile' in done.out  # no case_name: named after the file


def test_json_lines_carry_no_raw_escapes(capsys: pytest.CaptureFixture[str], hostile_trace: Path) -> None:
    done = run_cli(capsys, 'inspect', str(hostile_trace), '--json')
    assert done.code == 0, done.err
    for char in ('\x1b', '\x07', '\x9b', '\u202e'):
        assert char not in done.out
    (record,) = [json.loads(line) for line in done.out.splitlines()]
    assert record['name'] == 'hostile'
    assert record['trajectory']['tool_calls'][0]['arguments'] == {'q': ''.join(HOSTILE.values())}


def test_traces_are_named_by_their_case_name(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    provider = TracerProvider()
    tracer = provider.get_tracer('test')
    with capture(provider) as captured:
        for case in ('first', 'second'):
            with (
                tracer.start_as_current_span('case', attributes={'case_name': case}),
                tracer.start_as_current_span('execute_tool t', attributes={'gen_ai.tool.name': 't'}),
            ):
                pass
    path = tmp_path / 'cases.otlp.jsonl'
    write_otlp_json(captured.spans, path)
    done = run_cli(capsys, 'inspect', str(path))
    headers = [line for line in done.out.splitlines() if line.startswith('trace ')]
    assert [re.sub('[0-9a-f]{32}', 'ID', h) for h in headers] == [
        'trace ID  first (2 spans)',
        'trace ID  second (2 spans)',
    ]
    assert headers[0].split()[1] != headers[1].split()[1]  # the trace ids tell them apart


def test_the_epilog_lists_every_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'inspect', '--help')
    assert '3 internal error (a bug), 130 interrupted' in ' '.join(done.out.split())


@pytest.mark.parametrize(
    ('fixture', 'families'),
    [
        ('pydantic_ai/scenario.otlp.jsonl', ['pydantic-ai', 'otel-genai']),
        ('pydantic_ai/mixed-langgraph.otlp.jsonl', ['pydantic-ai', 'openinference', 'otel-genai']),
        ('google_adk/v1.otlp.jsonl', ['google-adk', 'otel-genai']),
        ('strands/default.otlp.jsonl', ['strands', 'otel-genai']),
        ('langgraph/langsmith.otlp.jsonl', ['langsmith', 'otel-genai']),
        ('openai_agents/logfire.otlp.jsonl', ['openai-agents', 'otel-genai']),
        ('smolagents/openinference.otlp.jsonl', ['openinference']),
    ],
)
def test_inspect_names_the_instrumentation_it_recognised(
    capsys: pytest.CaptureFixture[str], fixture: str, families: list[str]
) -> None:
    path = str(FRAMEWORKS / fixture)
    done = run_cli(capsys, 'inspect', path)
    assert done.code == 0
    assert f'instrumentation: {", ".join(families)}\n' in done.out
    done = run_cli(capsys, 'inspect', '--json', path)
    assert json.loads(done.out.splitlines()[0])['trajectory']['families'] == families


def test_inspect_says_when_it_recognised_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    line = {
        'resourceSpans': [
            {
                'scopeSpans': [
                    {
                        'spans': [
                            {
                                'traceId': '0' * 31 + '1',
                                'spanId': '0' * 15 + '1',
                                'name': 'step',
                                'startTimeUnixNano': '1',
                                'endTimeUnixNano': '2',
                                'attributes': [{'key': 'acme.kind', 'value': {'stringValue': 'tool'}}],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    path = tmp_path / 'acme.otlp.jsonl'
    path.write_text(json.dumps(line) + '\n')
    done = run_cli(capsys, 'inspect', str(path))
    assert done.code == 0
    assert 'instrumentation: none recognised\n' in done.out
    assert "note: no agent run, tool call or model request recognised in 1 span(s) (span names: 'step' x1" in done.out
