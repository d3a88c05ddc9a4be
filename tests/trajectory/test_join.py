"""Properties of the join between the tool spans that ran and the model responses that issued them.

Hand-built trees: an agent run whose `chat` spans list their tool calls in `gen_ai.output.messages`,
and tool spans started in any order (shuffled, on one millisecond, under per-call task spans).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_evals.evaluators import EvaluationReason, Evaluator
from pydantic_evals.otel import SpanTree

import agentic_evals as ae
from agentic_evals import extract_trajectory
from agentic_evals.trajectory.records import ToolCall

from ..factories import TreeBuilder, context

PROPERTY = settings(deadline=None, max_examples=150)
NAMES = ['search', 'fetch', 'book', 'weather']
KEYS = ['q', 'n', 'city']
values = st.one_of(st.integers(-5, 5), st.text('xyz', max_size=3), st.booleans())
argument_objects = st.dictionaries(st.sampled_from(KEYS), values, max_size=3)
Joined = list[tuple[str, Any, str | None, int | None]]


@dataclass(frozen=True)
class Issued:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Span:
    """A tool span as recorded: `arguments` is the attribute's text, `None` when not recorded."""

    name: str
    call_id: str | None = None
    arguments: str | None = None


@dataclass(frozen=True)
class Run:
    responses: list[list[Issued]]
    spans: list[list[Span]]
    """Each response's tool spans, in the order they started."""
    same_ms: bool = False
    """Each response's tool spans on one millisecond, in that insertion order."""
    tasks: bool = False
    """Each tool span under a task span of its own (LangGraph's `tools`)."""
    one_ms: bool = False
    """Every span of the tree on one millisecond: only insertion order is left."""


def messages(calls: list[Issued]) -> str:
    parts = [{'type': 'tool_call', 'id': c.call_id, 'name': c.name, 'arguments': c.arguments} for c in calls]
    return json.dumps([{'role': 'assistant', 'parts': parts}])


def build(run: Run) -> SpanTree:
    b = TreeBuilder(generic=True)
    agent: dict[str, Any] = {'gen_ai.agent.name': 'main', 'gen_ai.operation.name': 'invoke_agent'}
    root = b.span('invoke_agent main', start=0, **agent)
    for r, (issued, spans) in enumerate(zip(run.responses, run.spans, strict=True)):
        at = 0 if run.one_ms else 100 * r + 1
        b.chat(root, start=at, **{'gen_ai.output.messages': messages(issued)})
        for p, span in enumerate(spans):
            tick = at if run.one_ms else at + 10 + (0 if run.same_ms else p)
            parent = b.span('tools', root, start=tick) if run.tasks else root
            node = b.tool(span.name, parent, arguments=span.arguments, call_id=span.call_id, start=tick)
            # overlapping, and ending in the reverse of their start order
            node.end_timestamp = node.start_timestamp + timedelta(seconds=len(spans) - p)
    return b.build()


def joined(calls: tuple[ToolCall, ...]) -> Joined:
    return [(c.name, c.arguments, c.call_id, c.issued_by) for c in calls]


def in_issue_order(responses: list[list[Issued]]) -> Joined:
    return [(c.name, c.arguments, c.call_id, r) for r, calls in enumerate(responses) for c in calls]


@st.composite
def issued_responses(
    draw: st.DrawFn, *, distinct: bool = False, pool: tuple[str, ...] = tuple(NAMES)
) -> list[list[Issued]]:
    """1-3 responses of 1-4 calls each; names `distinct` within a response or drawn with repeats."""
    responses = []
    for r in range(draw(st.integers(1, 3))):
        k = draw(st.integers(1, min(4, len(pool)) if distinct else 4))
        names = (
            draw(st.permutations(pool))[:k]
            if distinct
            else draw(st.lists(st.sampled_from(pool), min_size=k, max_size=k))
        )
        responses.append([Issued(f'call_{r}_{j}', n, draw(argument_objects)) for j, n in enumerate(names)])
    return responses


@st.composite
def runs(
    draw: st.DrawFn,
    *,
    ids: bool = True,
    arguments: bool = True,
    distinct: bool = False,
    pool: tuple[str, ...] = tuple(NAMES),
) -> Run:
    """Issued responses and their spans started in a random order, recording ids and arguments or not."""
    responses = draw(issued_responses(distinct=distinct, pool=pool))
    spans = [
        [
            Span(c.name, c.call_id if ids else None, json.dumps(c.arguments) if arguments else None)
            for c in draw(st.permutations(issued))
        ]
        for issued in responses
    ]
    return Run(responses, spans, same_ms=draw(st.booleans()), tasks=draw(st.booleans()))


# -- 1. the two sources agree ---------------------------------------------------------------------


@PROPERTY
@given(runs())
def test_agreeing_calls_take_issue_order(run: Run) -> None:
    assert joined(extract_trajectory(build(run)).tool_calls) == in_issue_order(run.responses)


def test_an_id_quoted_in_an_earlier_calls_arguments_keeps_its_place() -> None:
    """The spans even start in issue order: the calls must not move."""
    issued = [
        Issued('call_1', 'lookup', {'ref': 'call_3'}),
        Issued('call_2', 'fetch', {}),
        Issued('call_3', 'fetch', {}),
    ]
    run = Run([issued], [[Span(c.name, c.call_id, json.dumps(c.arguments)) for c in issued]])
    assert joined(extract_trajectory(build(run)).tool_calls) == in_issue_order(run.responses)


# -- 2. the spans lack ids ------------------------------------------------------------------------


@PROPERTY
@given(runs(ids=False, arguments=False, distinct=True))
def test_ids_and_arguments_come_from_the_response(run: Run) -> None:
    """Names distinct within a response: each span is joined by name."""
    assert joined(extract_trajectory(build(run)).tool_calls) == in_issue_order(run.responses)


@st.composite
def same_name_runs(draw: st.DrawFn) -> Run:
    """Repeated names, distinct arguments among a response's calls of one name, no ids on the spans."""
    run = draw(runs(ids=False, pool=('a', 'b')))
    responses = [
        [replace(c, arguments={**c.arguments, 'n': j}) for j, c in enumerate(calls)] for calls in run.responses
    ]
    by_id = {c.call_id: c for calls in responses for c in calls}
    spans = [
        [Span(c.name, None, json.dumps(by_id[c.call_id].arguments)) for c in draw(st.permutations(calls))]
        for calls in responses
    ]
    return replace(run, responses=responses, spans=spans)


@PROPERTY
@given(same_name_runs())
def test_recorded_arguments_tell_same_name_calls_apart_in_order(run: Run) -> None:
    calls = extract_trajectory(build(run)).tool_calls
    assert [(c.name, c.arguments, c.issued_by) for c in calls] == [
        (n, a, r) for n, a, _, r in in_issue_order(run.responses)
    ]


def test_recorded_arguments_tell_same_name_calls_apart_when_reversed() -> None:
    b = TreeBuilder(generic=True)
    root = b.agent('main')
    b.chat(root, **{'gen_ai.output.messages': messages([Issued('c1', 'a', {'x': 1}), Issued('c2', 'a', {'x': 2})])})
    b.tool('a', root, arguments={'x': 2})
    b.tool('a', root, arguments={'x': 1})
    assert joined(extract_trajectory(b.build()).tool_calls) == [('a', {'x': 1}, 'c1', 0), ('a', {'x': 2}, 'c2', 0)]


# -- 3. the sources disagree ----------------------------------------------------------------------


@st.composite
def disagreeing_runs(draw: st.DrawFn) -> tuple[Run, set[str]]:
    """Spans whose arguments differ from the issued ones, issued calls without a span and spans whose
    id no response issued; also the ids of the issued calls left without a span."""
    run = draw(runs())
    missing: set[str] = set()
    spans: list[list[Span]] = []
    for r, group in enumerate(run.spans):
        kept: list[Span] = []
        for span in group:
            fate = draw(st.sampled_from(['agree', 'own', 'missing']))
            if fate == 'missing':
                missing.add(span.call_id or '')
                continue
            kept.append(replace(span, arguments=json.dumps({'own': span.call_id})) if fate == 'own' else span)
        for u in range(draw(st.integers(0, 2))):
            kept.insert(draw(st.integers(0, len(kept))), Span(draw(st.sampled_from(NAMES)), f'stray_{r}_{u}', '{}'))
        spans.append(kept)
    return replace(run, spans=spans), missing


@PROPERTY
@given(disagreeing_runs())
def test_the_span_wins_and_strays_are_kept(drawn: tuple[Run, set[str]]) -> None:
    run, missing = drawn
    calls = extract_trajectory(build(run)).tool_calls
    recorded = {s.call_id: s for spans in run.spans for s in spans}
    assert len(calls) == len(recorded)
    assert {c.call_id for c in calls} == set(recorded)  # the strays too; no issued call without its span
    for call in calls:
        span = recorded[call.call_id]
        assert (call.name, call.arguments) == (span.name, json.loads(span.arguments or 'null'))
    issued_ids = [c.call_id for c in (c for calls in run.responses for c in calls) if c.call_id not in missing]
    assert [(c.call_id, c.issued_by) for c in calls if c.call_id in issued_ids] == [
        (i, int(i.split('_')[1])) for i in issued_ids
    ]
    for call in calls:
        stray = call.call_id or ''
        if stray.startswith('stray_'):
            assert call.issued_by in (None, int(stray.split('_')[1]))


# -- 4. ties on timestamps ------------------------------------------------------------------------


@PROPERTY
@given(runs(), st.booleans())
def test_every_span_on_one_millisecond_takes_issue_order(run: Run, ids: bool) -> None:
    """Only insertion order is left: each response before its calls, the calls in any order."""
    if not ids:
        run = replace(run, spans=[[Span(s.name) for s in spans] for spans in run.spans])
    run = replace(run, one_ms=True)
    calls = extract_trajectory(build(run)).tool_calls
    if ids:
        assert joined(calls) == in_issue_order(run.responses)
    else:  # names may repeat: each span joined by its place among its name's calls
        assert [(c.name, c.issued_by) for c in calls] == [(n, r) for n, _, _, r in in_issue_order(run.responses)]


# -- 5. bare values -------------------------------------------------------------------------------

_words = st.from_regex(r'[A-Za-z][A-Za-z ]{0,8}', fullmatch=True).filter(
    lambda s: s not in ('true', 'false', 'null', 'NaN', 'Infinity')
)
bare_values = st.one_of(
    _words.map(lambda s: (json.dumps(s), s)),  # a JSON string: "Paris"
    _words.map(lambda s: (s, s)),  # plain text: Paris
    st.integers(-1000, 1000).map(lambda n: (str(n), n)),  # a number
)


@PROPERTY
@given(bare_values, st.sampled_from(KEYS), values, st.booleans())
def test_a_bare_value_gets_the_one_parameter_name(bare: tuple[str, Any], key: str, issued: Any, with_id: bool) -> None:
    raw, value = bare
    b = TreeBuilder(generic=True)
    root = b.agent('main')
    b.chat(root, **{'gen_ai.output.messages': messages([Issued('c1', 'weather', {key: issued})])})
    b.tool('weather', root, arguments=raw, call_id='c1' if with_id else None)
    (call,) = extract_trajectory(b.build()).tool_calls
    assert (call.arguments, call.raw_arguments, call.call_id, call.issued_by) == ({key: value}, raw, 'c1', 0)


@PROPERTY
@given(bare_values, st.booleans())
def test_a_bare_value_for_two_parameters_takes_the_issued_call(bare: tuple[str, Any], with_id: bool) -> None:
    raw, _ = bare
    b = TreeBuilder(generic=True)
    root = b.agent('main')
    b.chat(root, **{'gen_ai.output.messages': messages([Issued('c1', 'weather', {'city': 'x', 'n': 1})])})
    b.tool('weather', root, arguments=raw, call_id='c1' if with_id else None)
    (call,) = extract_trajectory(b.build()).tool_calls
    # no object on the span: the arguments as the model issued them
    assert (call.arguments, call.call_id, call.arguments_problem) == ({'city': 'x', 'n': 1}, 'c1', None)


# -- 6. the evaluators stay total ------------------------------------------------------------------

EVALUATORS: list[Evaluator[object, object, object]] = [
    ae.ToolCorrectness(expected_tools=['search', 'fetch']),
    ae.TrajectoryMatch(expected_trajectory=['search', 'fetch']),
    ae.TrajectoryMatch(expected_trajectory=['fetch', 'search'], order='any_order'),
    ae.ArgumentCorrectness(tool_name='search', expected_arguments={'q': 'x'}),
    ae.MaxToolCalls(3),
    ae.MaxModelRequests(2),
    ae.ToolCallMatch(expected_calls=[{'name': 'search', 'arguments': {'q': 'x'}}, {'name': 'fetch', 'arguments': {}}]),
    ae.NoLoops(),
    ae.ToolPermission(forbidden=['book']),
    ae.MaxFailedCalls(0),
    ae.ToolCallAccuracy(reference_tool_calls=[{'name': 'search', 'arguments': {'q': 'x'}}]),
    ae.ToolCallF1(reference_tool_calls=[{'name': 'fetch', 'arguments': {}}]),
]


@PROPERTY
@given(st.one_of(runs(), runs(ids=False, arguments=False), same_name_runs(), disagreeing_runs().map(lambda d: d[0])))
def test_the_evaluators_stay_total(run: Run) -> None:
    tree = build(run)
    for evaluator in EVALUATORS:
        assert isinstance(evaluator.evaluate(context(tree)), EvaluationReason), evaluator


# -- the same calls however they are read -----------------------------------------------------------


@PROPERTY
@given(st.one_of(runs(), runs(ids=False, arguments=False), same_name_runs()), st.data())
def test_records_do_not_depend_on_reading_order(run: Run, data: st.DataObject) -> None:
    whole = extract_trajectory(build(run)).tool_calls
    tree = build(run)
    trajectory = extract_trajectory(tree)
    last = trajectory.tool_calls[-1]
    assert trajectory.tool_calls == whole  # span ids are the same: both trees were built alike
    assert last == whole[-1]
    fresh = extract_trajectory(build(run)).calls()
    for index in data.draw(st.permutations(range(len(whole)))):
        assert fresh[index] == whole[index]
    assert extract_trajectory(tree).tool_calls == whole
