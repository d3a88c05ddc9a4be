"""Scoring captured traces with a Dataset: matching, inputs and output, any evaluator, failures."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EqualsExpected, HasMatchingSpan
from pydantic_evals.evaluators import ToolCorrectness as BuiltinToolCorrectness
from pydantic_evals.otel import SpanTree
from scenario import run_scenario

from agentic_evals import MaxModelRequests, MaxToolCalls, ToolCorrectness, TrajectoryMatch, capture
from agentic_evals.offline import evaluate_traces_sync, match_traces, trace_inputs, trace_output

from .factories import TreeBuilder

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
            "no root span with case_name='missing', no trace file named 'missing', no trace_id in the metadata",
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
