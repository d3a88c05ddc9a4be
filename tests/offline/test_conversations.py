"""Traces grouped by conversation: the ids the frameworks record, the merged tree, scoring one chat as a case."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic_evals import Case, Dataset
from pydantic_evals.otel import SpanTree
from pydantic_evals.otel.span_tree import AttributeValue

from agentic_evals import MaxToolCalls, TrajectoryMatch, evaluate_traces_sync, extract_trajectory, read_traces
from agentic_evals.conventions.sessions import conversation_id
from agentic_evals.offline.matching import ConversationTrace, group_conversations, match_traces
from agentic_evals.trajectory.run_io import trace_inputs, trace_output

from ..factories import TreeBuilder
from . import CHATS, ROOT

FRAMEWORKS = ROOT / 'fixtures' / 'frameworks'


@dataclass(frozen=True)
class Trace:
    trace_id: str
    tree: SpanTree
    name: str


def run(trace_id: int, tool: str, *, start: int, depth: int = 0, **attributes: AttributeValue) -> Trace:
    """One agent run calling `tool`, under `depth` plain spans; `attributes` go on the agent span."""
    b = TreeBuilder(trace_id=trace_id)
    b._clock = iter(range(start, start + 100))  # type: ignore[assignment]
    parent = None
    for level in range(depth):
        parent = b.span(f'wrapper {level}', parent)
    agent = b.agent('support', parent)
    agent.attributes.update(attributes)
    b.tool(tool, agent, arguments={})
    return Trace(f'{trace_id:032x}', b.build(), f'run{trace_id}')


@pytest.mark.parametrize(
    ('path', 'expected'),
    [
        ('google_adk/v1.otlp.jsonl', 'session-1'),  # the orchestrator's session, not the sub-run's own
        ('google_adk/v2-content.otlp.jsonl', 'session-1'),
        ('langgraph/langsmith.otlp.jsonl', None),  # langsmith.trace.session_name is the project
        ('openai_agents/logfire.otlp.jsonl', None),  # group_id recorded as null: no group
        ('strands/latest.otlp.jsonl', None),
        ('crewai/openinference.otlp.jsonl', None),
    ],
)
def test_the_conversation_id_frameworks_record(path: str, expected: str | None) -> None:
    [trace] = read_traces(FRAMEWORKS / path)
    assert conversation_id(trace.tree) == expected


def test_pydantic_ai_records_one_on_every_run() -> None:
    [trace] = read_traces(FRAMEWORKS / 'pydantic_ai' / 'scenario.otlp.jsonl')
    found = conversation_id(trace.tree)
    assert found is not None and len(found) == 36  # a fresh UUID7 per run when the app gives none
    assert [conversation_id(t.tree) for t in read_traces(CHATS)] == [
        'chat-refund',
        'chat-status',
        'chat-refund',
        None,
        'chat-status',
    ]


@pytest.mark.parametrize(
    ('attributes', 'expected'),
    [
        ({'gen_ai.conversation.id': 'c1'}, 'c1'),
        ({'session.id': 's1'}, 's1'),
        ({'gcp.vertex.agent.session_id': 'adk'}, 'adk'),
        ({'langsmith.metadata.thread_id': 't1'}, 't1'),
        ({'langsmith.metadata.session_id': 'ls'}, 'ls'),
        ({'langsmith.metadata.conversation_id': 'lc'}, 'lc'),
        ({'langsmith.trace.session_id': 'project'}, None),
        ({'group_id': 'g1', 'agent_trace_id': 'trace_1'}, 'g1'),
        ({'group_id': 'g1'}, None),
        ({'group_id': 'null', 'agent_trace_id': 'trace_1'}, None),
        ({'gen_ai.conversation.id': ''}, None),
        ({'session.id': 7}, '7'),
        ({'gen_ai.conversation.id': 'c1', 'session.id': 's1'}, 'c1'),
    ],
)
def test_the_keys_read(attributes: dict[str, AttributeValue], expected: str | None) -> None:
    assert conversation_id(run(1, 'search', start=0, **attributes).tree) == expected


def test_the_shallowest_span_decides() -> None:
    b = TreeBuilder()
    turn = b.agent('support')
    call = b.tool('ask_expert', turn)
    expert = b.agent('expert', call)
    expert.attributes['gen_ai.conversation.id'] = 'expert-run'
    turn.attributes['gen_ai.conversation.id'] = 'chat'
    tree = b.build()
    assert conversation_id(tree) == 'chat'
    assert conversation_id(expert) == 'expert-run'
    assert conversation_id(run(1, 'x', start=0, depth=3, **{'session.id': 'deep'}).tree) == 'deep'


def test_the_turns_of_a_chat_become_one_trace() -> None:
    traces = read_traces(CHATS)
    grouped = list(group_conversations(traces))
    # the run without a conversation id streams through first; the chats follow when the input ends
    assert [type(t).__name__ for t in grouped] == ['LoadedTrace', 'ConversationTrace', 'ConversationTrace']
    refund, status = grouped[1], grouped[2]
    assert isinstance(refund, ConversationTrace) and isinstance(status, ConversationTrace)
    assert (refund.conversation_id, status.conversation_id) == ('chat-refund', 'chat-status')
    assert [t.trace_id[-1] for t in refund.traces] == ['1', '3']
    assert (refund.trace_id, refund.name) == (traces[0].trace_id, 'chats')
    # one tree whose roots are each turn's agent run, in start order: turns stay separate runs
    roots = refund.tree.roots
    assert [r.name for r in roots] == ['invoke_agent support', 'invoke_agent support']
    assert [r.trace_id for r in roots] == [int(traces[0].trace_id, 16), int(traces[2].trace_id, 16)]
    assert roots[0].end_timestamp < roots[1].start_timestamp
    assert len(list(refund.tree)) == len(list(traces[0].tree)) + len(list(traces[2].tree))
    trajectory = extract_trajectory(refund.tree)
    assert [c.name for c in trajectory.tool_calls] == ['lookup_order', 'refund']
    assert [(r.name, r.path) for r in trajectory.agents] == [('support', ('support',)), ('support', ('support',))]
    assert trace_inputs(refund.tree) == 'Where is order A100?'
    assert trace_output(refund.tree) == 'Refunded 25.00 EUR for order A100.'


def test_turns_in_any_order_are_put_in_start_order() -> None:
    late, early = run(1, 'refund', start=50, **{'session.id': 's'}), run(2, 'lookup', start=0, **{'session.id': 's'})
    [merged] = group_conversations([late, early])
    assert isinstance(merged, ConversationTrace)
    assert [t.trace_id for t in merged.traces] == [early.trace_id, late.trace_id]
    assert [c.name for c in extract_trajectory(merged.tree).tool_calls] == ['lookup', 'refund']


def test_a_trace_without_a_conversation_id_streams_through() -> None:
    pulled: list[int] = []

    def traces() -> Iterator[Trace]:
        for i, attributes in enumerate([{}, {'session.id': 's'}, {}]):
            pulled.append(i)
            yield run(i + 1, 'x', start=i * 10, **attributes)

    grouped = group_conversations(traces())
    assert next(grouped).trace_id.endswith('1') and pulled == [0]
    assert next(grouped).trace_id.endswith('3') and pulled == [0, 1, 2]
    last = next(grouped)
    assert isinstance(last, ConversationTrace) and last.conversation_id == 's'
    assert next(grouped, None) is None


def test_a_conversation_is_scored_as_one_case() -> None:
    report = evaluate_traces_sync(
        read_traces(CHATS), evaluators=[MaxToolCalls(1)], name='chats', group_by='conversation'
    )
    cases = {c.name: c for c in report.cases}
    assert list(cases) == ['chats', 'chat-refund', 'chat-status']
    refund = cases['chat-refund']
    assert refund.assertions['MaxToolCalls'].reason == '2 tool call(s), budget=1'
    assert refund.inputs == 'Where is order A100?'
    assert refund.output == 'Refunded 25.00 EUR for order A100.'
    assert refund.metadata == {
        'conversation_id': 'chat-refund',
        'trace_ids': [f'{0xC0 << 112 | 1:032x}', f'{0xC0 << 112 | 3:032x}'],
    }
    singles = {t.trace_id: t for t in read_traces(CHATS)}
    turns = [evaluate_traces_sync([singles[i]], evaluators=[]).cases[0] for i in refund.metadata['trace_ids']]
    # metrics add up over the turns; the duration is the turns' own, not the time the user took between them
    assert refund.metrics == {k: sum(t.metrics[k] for t in turns) for k in turns[0].metrics}
    assert refund.task_duration == pytest.approx(sum(t.task_duration for t in turns))
    assert refund.task_duration < 0.2  # the turns are 0.4 s apart in the fixture
    assert refund.trace_id == turns[0].trace_id
    assert cases['chats'].metadata == {'trace_id': f'{0xC0 << 112 | 4:032x}'}


def test_without_grouping_each_turn_is_a_case() -> None:
    report = evaluate_traces_sync(read_traces(CHATS), evaluators=[MaxToolCalls(1)])
    assert [c.name for c in report.cases] == [
        'chats',
        'chats (00c00000)',
        'chats (00c00000)',
        'chats (00c00000)',
        'chats (00c00000)',
    ]
    assert [c.assertions['MaxToolCalls'].value for c in report.cases] == [True] * 5


def test_a_dataset_case_finds_a_conversation_by_its_first_message() -> None:
    dataset = Dataset[str, str, None](
        name='chats',
        cases=[
            Case(
                name='refund', inputs='Where is order A100?', evaluators=(TrajectoryMatch(['lookup_order', 'refund']),)
            ),
            Case(name='faq', inputs='How long does shipping to Norway take?'),
        ],
    )
    report = evaluate_traces_sync(read_traces(CHATS), dataset=dataset, group_by='conversation')
    refund, faq = report.cases
    assert refund.scores['TrajectoryMatch'].value == 1.0  # both turns' calls, in order
    assert refund.trace_id == f'{0xC0 << 112 | 1:032x}'
    assert faq.trace_id == f'{0xC0 << 112 | 4:032x}'


def test_a_case_may_name_any_turn_by_trace_id() -> None:
    grouped = list(group_conversations(read_traces(CHATS)))
    case = Case(name='x', inputs=None, metadata={'trace_id': f'{0xC0 << 112 | 3:032x}'})
    [match] = match_traces([case], grouped)
    assert isinstance(match.trace, ConversationTrace) and match.trace.conversation_id == 'chat-refund'
    assert match.why == 'metadata trace_id'


def test_the_generator_is_committed_with_its_fixture() -> None:
    folder = Path(CHATS).parent
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith('.')) == [
        'chats.otlp.jsonl',
        'dataset.yaml',
        'generate.py',
    ]
