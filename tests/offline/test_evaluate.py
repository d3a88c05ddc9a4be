"""Scoring captured traces with a Dataset: matching, inputs and output, any evaluator, failures."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EqualsExpected, HasMatchingSpan
from pydantic_evals.evaluators import ToolCorrectness as BuiltinToolCorrectness
from pydantic_evals.otel import SpanTree
from scenario import run_scenario

from agentic_evals import (
    MaxModelRequests,
    MaxToolCalls,
    ToolCorrectness,
    TrajectoryMatch,
    capture,
    evaluate_traces_sync,
    extract_trajectory,
)
from agentic_evals.offline.matching import match_traces
from agentic_evals.trajectory.run_io import trace_inputs, trace_output

from ..factories import TreeBuilder

PROMPT = 'Write a short report on how tool calls appear in OpenTelemetry spans.'
OUTPUT = 'Tool spans: Arguments live on execute_tool spans.'


@dataclass(frozen=True)
class Trace:
    trace_id: str
    tree: SpanTree
    name: str


@pytest.fixture(scope='module')
def scenario_trace() -> Trace:
    provider = TracerProvider()
    with capture(provider) as captured:
        run = run_scenario(version=5, tracer_provider=provider)
    return Trace(f'{run.trace_id:032x}', captured.tree, 'scenario_v5')


def named(name: str, *, case_name: str | None = None, trace_id: int = 1) -> Trace:
    b = TreeBuilder(trace_id=trace_id)
    root = b.span('root', **({'case_name': case_name} if case_name else {}))
    agent = b.agent('main', root)
    b.tool('search', agent)
    return Trace(f'{trace_id:032x}', b.build(), name)


def test_inputs_and_output_come_from_the_agent_spans(scenario_trace: Trace) -> None:
    assert trace_inputs(scenario_trace.tree) == PROMPT
    assert trace_output(scenario_trace.tree) == OUTPUT


def test_inputs_and_output_from_genai_messages_when_pydantic_ai_attributes_are_absent() -> None:
    b = TreeBuilder()
    agent = b.agent('main')
    b.chat(
        agent,
        **{
            'gen_ai.input.messages': '[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]',
            'gen_ai.output.messages': '[{"role": "assistant", "parts": [{"type": "text", "content": "hello"}]}]',
        },
    )
    tree = b.build()
    assert (trace_inputs(tree), trace_output(tree)) == ('hi', 'hello')
    assert (trace_inputs(SpanTree()), trace_output(SpanTree())) == (None, None)


def test_structured_final_result_is_parsed() -> None:
    b = TreeBuilder()
    b.span('invoke_agent main', **{'gen_ai.agent.name': 'main', 'final_result': '{"answer": 42}'})
    assert trace_output(b.build()) == {'answer': 42}


def test_matching_rules_in_order() -> None:
    by_attribute = named('file_a', case_name='refund', trace_id=1)
    by_file = named('refund', trace_id=2)  # loses to the attribute rule
    by_file_only = named('lookup', trace_id=3)
    by_id = named('file_c', trace_id=0xABC)
    cases = [
        Case(name='refund', inputs=None),
        Case(name='lookup', inputs=None),
        Case(name='by_metadata', inputs=None, metadata={'trace_id': f'{0xABC:032X}'}),
        Case(name='missing', inputs=None),
    ]
    matches = match_traces(cases, [by_attribute, by_file, by_file_only, by_id])
    assert [(m.case.name, m.trace, m.why) for m in matches] == [
        ('refund', by_attribute, 'case_name attribute'),
        ('lookup', by_file_only, 'file name'),
        ('by_metadata', by_id, 'metadata trace_id'),
        (
            'missing',
            None,
            "no root span with case_name='missing', no trace file named 'missing', no trace_id in the metadata,"
            ' no text inputs to match a first user message',
        ),
    ]


def test_a_dataset_scores_traces_with_any_evaluator(scenario_trace: Trace) -> None:
    dataset = Dataset[str, str, None](
        name='offline',
        cases=[
            Case(name='scenario_v5', inputs=PROMPT, expected_output=OUTPUT),
            Case(name='no_trace', inputs='?'),
        ],
        evaluators=[
            ToolCorrectness(['search', 'fetch'], allow_extra=True),
            BuiltinToolCorrectness(['lookup', 'lookup'], allow_extra=True),
            HasMatchingSpan({'name_equals': 'invoke_agent expert'}, evaluation_name='delegated'),
            EqualsExpected(),
            TrajectoryMatch(['lookup', 'lookup'], agent='expert'),
            MaxModelRequests(13),
        ],
    )
    report = evaluate_traces_sync([scenario_trace], dataset=dataset)
    assert report.name == 'offline'
    [case] = report.cases
    assert case.name == 'scenario_v5'
    assert case.output == OUTPUT
    assert {name: r.value for name, r in case.assertions.items()} == {
        'ToolCorrectness': True,
        'ToolCorrectness_2': True,  # the built-in of the same name, on the same replayed spans
        'delegated': True,
        'EqualsExpected': True,
        'MaxModelRequests': False,
    }
    assert case.assertions['MaxModelRequests'].reason == "14 model request(s) (from ctx.metrics['requests']), budget=13"
    assert case.scores['TrajectoryMatch'].value == 1.0
    assert case.metrics['requests'] == 14  # pydantic-evals counted the replayed model requests itself
    [failure] = report.failures
    assert failure.name == 'no_trace'
    assert "no trace found for case 'no_trace': no root span with case_name='no_trace'" in failure.error_message


def test_without_a_dataset_every_trace_is_a_case(scenario_trace: Trace) -> None:
    duplicate = Trace('f' * 32, scenario_trace.tree, scenario_trace.name)
    report = evaluate_traces_sync([scenario_trace, duplicate], evaluators=[MaxToolCalls(20)], name='all')
    assert [(c.name, c.inputs, c.output, c.assertions['MaxToolCalls'].value) for c in report.cases] == [
        ('scenario_v5', PROMPT, OUTPUT, True),
        ('scenario_v5 (ffffffff)', PROMPT, OUTPUT, True),
    ]
    assert report.averages() is not None  # the regular report machinery works


def test_a_case_matching_two_traces_is_an_error_naming_both(scenario_trace: Trace) -> None:
    from agentic_evals.offline.matching import AmbiguousTraceError

    twin = Trace('e' * 32, scenario_trace.tree, scenario_trace.name)
    dataset = Dataset[str, str, None](name='d', cases=[Case(name='scenario_v5', inputs=PROMPT)])
    with pytest.raises(AmbiguousTraceError) as raised:
        evaluate_traces_sync([scenario_trace, twin], dataset=dataset)
    assert str(raised.value) == (
        f"case 'scenario_v5' matches 2 traces by file name: scenario_v5 ({scenario_trace.trace_id}),"
        f' scenario_v5 ({"e" * 32})'
    )


def test_a_better_rule_wins_over_a_weaker_one_without_ambiguity() -> None:
    by_attribute = named('other', case_name='refund', trace_id=1)
    by_file = named('refund', trace_id=2)
    [match] = match_traces([Case(name='refund', inputs=None)], [by_file, by_attribute])
    assert (match.trace, match.why) == (by_attribute, 'case_name attribute')


def test_without_a_dataset_traces_are_scored_as_they_stream(scenario_trace: Trace) -> None:
    import asyncio

    from agentic_evals.offline.evaluate import scored_cases

    pulled: list[int] = []

    def traces() -> Iterator[Trace]:
        for i in range(3):
            pulled.append(i)
            yield Trace(f'{i:032x}', scenario_trace.tree, f'run{i}')

    async def first_two() -> list[int]:
        seen: list[int] = []
        async for _ in scored_cases(traces(), evaluators=[MaxToolCalls(20)]):
            seen.append(len(pulled))
            if len(seen) == 2:
                break
        return seen

    # each case is scored right after its trace is read, before the next one is pulled
    assert asyncio.run(first_two()) == [1, 2]


def test_the_case_reports_the_recorded_run(scenario_trace: Trace) -> None:
    from pydantic_evals.evaluators import MaxDuration

    [case] = evaluate_traces_sync([scenario_trace], evaluators=[MaxDuration(10)]).cases
    roots = scenario_trace.tree.roots
    recorded = (max(r.end_timestamp for r in roots) - min(r.start_timestamp for r in roots)).total_seconds()
    assert case.task_duration == recorded > 0
    assert case.trace_id == scenario_trace.trace_id
    assert case.span_id == f'{roots[0].span_id:016x}'
    requests = extract_trajectory(scenario_trace.tree).model_requests
    assert case.metrics == {
        'requests': 14,
        'input_tokens': sum(r.input_tokens for r in requests),
        'output_tokens': sum(r.output_tokens for r in requests),
    }


@pytest.mark.slow
def test_scoring_traces_emits_no_spans_and_needs_no_provider() -> None:
    """Nothing is replayed: the global provider stays unset, and no span reaches any exporter."""
    script = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, 'fixtures')
        from opentelemetry import trace
        from agentic_evals import MaxToolCalls, evaluate_traces_sync, read_traces
        report = evaluate_traces_sync(read_traces('fixtures/scenario/v5.otlp.jsonl'), evaluators=[MaxToolCalls(20)])
        print(type(trace.get_tracer_provider()).__name__, report.cases[0].assertions['MaxToolCalls'].value)
        """
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ['ProxyTracerProvider', 'True']
