"""Span trees shaped like pydantic-ai's instrumentation version 5 output, built for benchmarking.

A run is planned once from a seed (`plan_run`): every model response, every tool call, every
attribute string and timestamp. `AgentRunPlan.build_tree()` then turns the plan into brand-new
`SpanNode` objects and a brand-new `SpanTree` each time it is called, so every timed repetition can
score a tree that no evaluator has seen before, at the cost of only object construction.

What a planned run looks like, following what pydantic-ai 2.62 records with `version=5` (see
`fixtures/scenario.py` and `fixtures/dump_spans.py` for the real thing):

- one root `invoke_agent main` span (`gen_ai.agent.name='main'`, `gen_ai.operation.name='invoke_agent'`);
- children of the root, in time order: a `chat model-x` span per model response, carrying the
  request model, token usage and `gen_ai.output.messages` with the response's `tool_call` parts,
  then one `execute_tool NAME` span per issued call (`gen_ai.tool.name`, `gen_ai.tool.call.id`,
  compact JSON `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`,
  `logfire.msg='running tool: NAME'`), then the next `chat` span, ... and a final text response;
- one to five calls per response, drawn from ten tools; calls of one response run concurrently
  (starts a few microseconds apart in issue order, overlapping durations);
- some attempts fail, as in real runs: a tool asking for a retry (`ModelRetry`: status `error`,
  `pydantic_ai.tool.retry.cause='model_retry'`, the retry prompt as result) or arguments that fail
  validation (status `error`, `logfire.msg='invalid tool call: NAME'`,
  `pydantic_ai.tool.failure_stage='validation'`; such a span starts before its siblings run, because
  pydantic-ai validates all of a response's calls first). The model re-issues a failed call in its
  next response.

Left out on purpose: `gen_ai.input.messages` on chat spans and `pydantic_ai.all_messages` on the
root. pydantic-ai records the whole conversation so far on every request, which grows quadratically
with the run (gigabytes for 2,000 calls) and is read by neither side.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

from pydantic_evals.otel.span_tree import AttributeValue, SpanNode, SpanStatus, SpanTree

__all__ = ('AgentRunPlan', 'PlannedCall', 'PlannedSpan', 'RecordedRun', 'perturb', 'plan_run')

AGENT_NAME = 'main'
REQUEST_MODEL = 'model-x'
RESPONSE_MODEL = 'model-x-2025-06-01'
RETRY_RATE = 0.04
"""Share of attempts whose tool raises `ModelRetry`."""
INVALID_RATE = 0.02
"""Share of attempts whose arguments fail validation."""
CONTEXT_WINDOW = 128_000
CALLS_PER_RESPONSE = (1, 2, 3, 4, 5)
CALLS_PER_RESPONSE_WEIGHTS = (35, 30, 20, 10, 5)

Outcome = Literal['ok', 'retry', 'invalid']
Layout = Literal['siblings', 'children']
"""Where a response's tool spans go: after their chat span under the agent run (pydantic-ai), or
under the chat span itself (frameworks that parent tool spans to the model request)."""


def _compact(value: object) -> str:
    """JSON as pydantic-ai writes it: no spaces."""
    return json.dumps(value, separators=(',', ':'))


# ---------------------------------------------------------------------------------------------
# Tools: name, weight, and how to draw plausible arguments and results
# ---------------------------------------------------------------------------------------------

_WORDS = (
    'latency', 'budget', 'span', 'trace', 'agent', 'model', 'token', 'cache', 'retry', 'queue', 'index', 'schema',
    'report', 'invoice', 'customer', 'region', 'deploy', 'rollout', 'metric', 'alert', 'dashboard', 'export',
    'import', 'billing', 'search', 'vector',
)  # fmt: skip
_CITIES = ('Paris', 'Lagos', 'Osaka', 'Lima', 'Oslo', 'Pune', 'Denver', 'Cairo')
_TABLES = ('orders', 'customers', 'events', 'invoices', 'sessions')


def _words(rng: random.Random, low: int, high: int) -> str:
    return ' '.join(rng.choice(_WORDS) for _ in range(rng.randint(low, high)))


def _arguments(name: str, rng: random.Random) -> dict[str, Any]:
    if name == 'search':
        return {'query': _words(rng, 2, 6), 'max_results': rng.choice((5, 10, 20))}
    if name == 'fetch_url':
        return {'url': f'https://docs.example.com/{rng.choice(_WORDS)}/{rng.randint(1, 999)}'}
    if name == 'read_file':
        return {'path': f'src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py'}
    if name == 'write_file':
        return {'path': f'out/{rng.choice(_WORDS)}.md', 'content': _words(rng, 10, 40)}
    if name == 'run_sql':
        table = rng.choice(_TABLES)
        query = f'SELECT id, status, total FROM {table} WHERE region = {rng.randint(1, 40)} LIMIT 50'
        return {'query': query, 'database': 'analytics'}
    if name == 'get_weather':
        return {'city': rng.choice(_CITIES), 'units': rng.choice(('metric', 'imperial'))}
    if name == 'send_email':
        return {
            'to': f'{rng.choice(_WORDS)}@example.com',
            'subject': _words(rng, 2, 5),
            'body': _words(rng, 15, 50),
        }
    if name == 'calculator':
        return {'expression': f'{rng.randint(1, 999)} * {rng.randint(1, 99)} + {rng.randint(0, 50)}'}
    if name == 'lookup_user':
        return {'user_id': rng.randint(1000, 99999), 'fields': rng.sample(['email', 'plan', 'region', 'created'], 2)}
    if name == 'list_directory':
        return {'path': f'src/{rng.choice(_WORDS)}', 'recursive': rng.random() < 0.3}
    raise ValueError(f'unknown tool {name!r}')


def _invalid_arguments(name: str, rng: random.Random) -> dict[str, Any]:
    """Arguments that fail validation: one value of the wrong type."""
    arguments = _arguments(name, rng)
    key = next(iter(arguments))
    arguments[key] = [rng.choice(_WORDS)] if isinstance(arguments[key], str) else _words(rng, 1, 2)
    return arguments


def _result(name: str, rng: random.Random) -> str:
    if name in ('search', 'list_directory'):
        return _compact([f'https://docs.example.com/{rng.choice(_WORDS)}/{i}' for i in range(rng.randint(2, 8))])
    if name == 'run_sql':
        rows = [{'id': rng.randint(1, 10**6), 'status': rng.choice(('paid', 'open')), 'total': rng.randint(1, 900)}]
        return _compact(rows * rng.randint(1, 6))
    if name == 'calculator':
        return str(rng.randint(0, 10**5))
    if name in ('write_file', 'send_email'):
        return 'ok'
    return _words(rng, 8, 60)


TOOLS: dict[str, int] = {
    'search': 20,
    'fetch_url': 14,
    'read_file': 14,
    'run_sql': 10,
    'lookup_user': 10,
    'calculator': 8,
    'list_directory': 8,
    'write_file': 6,
    'get_weather': 5,
    'send_email': 5,
}
"""The ten tools and how often the model picks each."""


# ---------------------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedSpan:
    """Everything a `SpanNode` is built from; immutable values only, so they can be shared."""

    name: str
    span_id: int
    parent_span_id: int | None
    start: datetime
    end: datetime
    attributes: tuple[tuple[str, AttributeValue], ...]
    status: SpanStatus

    def node(self, trace_id: int) -> SpanNode:
        return SpanNode(
            name=self.name,
            trace_id=trace_id,
            span_id=self.span_id,
            parent_span_id=self.parent_span_id,
            start_timestamp=self.start,
            end_timestamp=self.end,
            attributes=dict(self.attributes),
            status=self.status,
        )


@dataclass(frozen=True)
class PlannedCall:
    """One tool call attempt as the model issued it."""

    name: str
    call_id: str
    arguments: dict[str, Any]
    outcome: Outcome


@dataclass(frozen=True)
class AgentRunPlan:
    """One planned agent run: its spans, the calls in issue order, and the metrics pydantic-evals would record."""

    trace_id: int
    spans: tuple[PlannedSpan, ...]
    calls: tuple[PlannedCall, ...]
    model_requests: int
    input_tokens: int
    output_tokens: int

    def build_tree(self) -> SpanTree:
        """A new `SpanTree` made of new `SpanNode`s, as pydantic-evals builds it from exported spans."""
        tree = SpanTree()
        tree.add_spans([span.node(self.trace_id) for span in self.spans])
        return tree

    @property
    def trajectory(self) -> list[str]:
        """Names of the calls that ran successfully, in issue order: what the evaluators score by default."""
        return [call.name for call in self.calls if call.outcome == 'ok']

    @property
    def metrics(self) -> dict[str, int | float]:
        """`ctx.metrics` as pydantic-evals fills it from the span tree of a case."""
        return {'requests': self.model_requests, 'input_tokens': self.input_tokens, 'output_tokens': self.output_tokens}


@dataclass(frozen=True)
class RecordedRun:
    """A recorded trace (read from a trace file), rebuilt from new `SpanNode`s by every `build_tree()`.

    What `AgentRunPlan` is for planned runs, for real ones: a fresh tree per repetition, so every
    repetition pays for extraction. `metrics` are what pydantic-evals would record for the case.
    """

    trace_id: int
    spans: tuple[PlannedSpan, ...]
    metrics: dict[str, int | float]

    @classmethod
    def from_tree(cls, tree: SpanTree, metrics: dict[str, int | float]) -> RecordedRun:
        """The spans of `tree`, in the tree's order, as immutable plans."""
        nodes = list(tree)
        spans = tuple(
            PlannedSpan(
                name=node.name,
                span_id=node.span_id,
                parent_span_id=node.parent_span_id,
                start=node.start_timestamp,
                end=node.end_timestamp,
                attributes=tuple(node.attributes.items()),
                status=node.status,
            )
            for node in nodes
        )
        return cls(trace_id=nodes[0].trace_id, spans=spans, metrics=dict(metrics))

    def build_tree(self) -> SpanTree:
        """A new `SpanTree` made of new `SpanNode`s."""
        tree = SpanTree()
        tree.add_spans([span.node(self.trace_id) for span in self.spans])
        return tree


class _Clock:
    """Microseconds since the run started, turned into UTC datetimes."""

    def __init__(self, origin: datetime) -> None:
        self.origin = origin

    def at(self, microseconds: int) -> datetime:
        return self.origin + timedelta(microseconds=microseconds)


def plan_run(
    *,
    ok_calls: int | None = None,
    tool_spans: int | None = None,
    seed: int = 0,
    calls_per_response: int | None = None,
    layout: Layout = 'siblings',
) -> AgentRunPlan:
    """Plan a run that stops once it has `ok_calls` successful calls or `tool_spans` tool spans.

    Exactly one of the two limits must be given. The same arguments always give the same plan.
    `calls_per_response` fixes the number of calls each response issues (one to five, drawn, by
    default); `layout` says where tool spans hang (see `Layout`).
    """
    if (ok_calls is None) == (tool_spans is None):
        raise ValueError('pass exactly one of ok_calls and tool_spans')
    rng = random.Random(seed)
    tool_names = list(TOOLS)
    tool_weights = list(TOOLS.values())
    trace_id = rng.getrandbits(128)
    run_id = f'{rng.getrandbits(128):032x}'
    conversation_id = f'{rng.getrandbits(128):032x}'
    clock = _Clock(datetime(2025, 6, 1, 9, 0, 0, tzinfo=timezone.utc))
    root_id = rng.getrandbits(64)
    shared: tuple[tuple[str, AttributeValue], ...] = (
        ('gen_ai.agent.name', AGENT_NAME),
        ('gen_ai.agent.call.id', run_id),
        ('gen_ai.conversation.id', conversation_id),
    )
    tool_definitions = _compact(
        [{'type': 'function', 'name': name, 'parameters': {'type': 'object'}} for name in tool_names]
    )

    spans: list[PlannedSpan] = []
    calls: list[PlannedCall] = []
    now = rng.randint(500, 3_000)
    requests = input_tokens = output_tokens = 0
    context_tokens = rng.randint(300, 900)
    reissue: list[str] = []
    ok_count = span_count = 0

    def done() -> bool:
        if ok_calls is not None:
            return ok_count >= ok_calls
        return span_count >= (tool_spans or 0)

    while True:
        # Decide this response's calls (none once the limit is reached: the final text answer).
        issued: list[PlannedCall] = []
        if not done():
            drawn = rng.choices(CALLS_PER_RESPONSE, CALLS_PER_RESPONSE_WEIGHTS)[0]
            wanted = drawn if calls_per_response is None else calls_per_response
            names = reissue + rng.choices(tool_names, tool_weights, k=max(0, wanted - len(reissue)))
            reissue = []
            for name in names:
                if done():
                    break
                roll = rng.random()
                outcome: Outcome = (
                    'retry' if roll < RETRY_RATE else 'invalid' if roll < RETRY_RATE + INVALID_RATE else 'ok'
                )
                arguments = _invalid_arguments(name, rng) if outcome == 'invalid' else _arguments(name, rng)
                call = PlannedCall(name, f'call_{rng.getrandbits(96):024x}', arguments, outcome)
                issued.append(call)
                span_count += 1
                ok_count += outcome == 'ok'
                if outcome != 'ok':
                    reissue.append(name)

        # The model request.
        parts: list[dict[str, Any]] = []
        if rng.random() < 0.3 or not issued:
            parts.append({'type': 'text', 'content': _words(rng, 5, 30 if issued else 80)})
        parts.extend(
            {'type': 'tool_call', 'id': call.call_id, 'name': call.name, 'arguments': call.arguments} for call in issued
        )
        out_tokens = rng.randint(10, 60) + 25 * len(issued)
        requests += 1
        input_tokens += context_tokens
        output_tokens += out_tokens
        chat_start, chat_end = now, now + rng.randint(300_000, 3_000_000)
        chat_id = rng.getrandbits(64)
        chat_index = len(spans)
        spans.append(
            PlannedSpan(
                name=f'chat {REQUEST_MODEL}',
                span_id=chat_id,
                parent_span_id=root_id,
                start=clock.at(chat_start),
                end=clock.at(chat_end),
                attributes=(
                    ('gen_ai.provider.name', 'openai'),
                    ('gen_ai.system', 'openai'),
                    ('gen_ai.request.model', REQUEST_MODEL),
                    ('gen_ai.tool.definitions', tool_definitions),
                    ('gen_ai.operation.name', 'chat'),
                    *shared,
                    ('gen_ai.output.messages', _compact([{'role': 'assistant', 'parts': parts}])),
                    ('gen_ai.usage.input_tokens', context_tokens),
                    ('gen_ai.usage.output_tokens', out_tokens),
                    ('gen_ai.response.model', RESPONSE_MODEL),
                    ('gen_ai.response.id', f'resp_{rng.getrandbits(64):016x}'),
                    ('gen_ai.response.finish_reasons', ('tool_call',) if issued else ('stop',)),
                ),
                status='unset',
            )
        )
        context_tokens = min(context_tokens + out_tokens, CONTEXT_WINDOW)
        now = chat_end + rng.randint(100, 400)
        if not issued:
            break

        # Validation first (invalid calls get a short span before anything runs), then the rest run
        # concurrently, started in issue order.
        ends = [now]
        tool_parent = root_id if layout == 'siblings' else chat_id
        for call in issued:
            if call.outcome == 'invalid':
                end = now + rng.randint(30, 120)
                spans.append(_tool_span(call, tool_parent, clock.at(now), clock.at(end), shared, rng))
                ends.append(end)
                now = end + rng.randint(5, 20)
        for call in issued:
            if call.outcome != 'invalid':
                end = now + rng.randint(500, 800_000)
                spans.append(_tool_span(call, tool_parent, clock.at(now), clock.at(end), shared, rng))
                ends.append(end)
                now += rng.randint(15, 60)
        calls.extend(issued)
        if layout == 'children':  # the model request span then lasts until its tools are done
            spans[chat_index] = replace(spans[chat_index], end=clock.at(max(ends)))
        # Tool results join the context, which the run keeps under the model's window by trimming history.
        context_tokens = min(context_tokens + sum(rng.randint(20, 400) for _ in issued), CONTEXT_WINDOW)
        now = max(ends) + rng.randint(1_000, 5_000)

    root = PlannedSpan(
        name=f'invoke_agent {AGENT_NAME}',
        span_id=root_id,
        parent_span_id=None,
        start=clock.at(0),
        end=clock.at(now),
        attributes=(
            ('model_name', REQUEST_MODEL),
            ('agent_name', AGENT_NAME),
            *shared,
            ('gen_ai.operation.name', 'invoke_agent'),
            ('logfire.msg', f'{AGENT_NAME} run'),
            ('final_result', _words(rng, 20, 60)),
            ('gen_ai.aggregated_usage.input_tokens', input_tokens),
            ('gen_ai.aggregated_usage.output_tokens', output_tokens),
        ),
        status='unset',
    )
    return AgentRunPlan(
        trace_id=trace_id,
        spans=(root, *spans),
        calls=tuple(calls),
        model_requests=requests,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )


def _tool_span(
    call: PlannedCall,
    parent_id: int,
    start: datetime,
    end: datetime,
    shared: tuple[tuple[str, AttributeValue], ...],
    rng: random.Random,
) -> PlannedSpan:
    attributes: list[tuple[str, AttributeValue]] = [
        ('gen_ai.operation.name', 'execute_tool'),
        ('gen_ai.tool.name', call.name),
        ('gen_ai.tool.call.id', call.call_id),
        ('gen_ai.tool.call.arguments', _compact(call.arguments)),
        *shared,
    ]
    status: SpanStatus = 'unset'
    if call.outcome == 'ok':
        attributes += [
            ('logfire.msg', f'running tool: {call.name}'),
            ('gen_ai.tool.call.result', _result(call.name, rng)),
        ]
    elif call.outcome == 'retry':
        status = 'error'
        attributes += [
            ('logfire.msg', f'running tool: {call.name}'),
            ('gen_ai.tool.call.result', f'{call.name} is temporarily unavailable, try again'),
            ('pydantic_ai.tool.retry.attempt', 1),
            ('pydantic_ai.tool.retry.cause', 'model_retry'),
            ('pydantic_ai.tool.retry.max_retries', 3),
        ]
    else:
        status = 'error'
        key = next(iter(call.arguments))
        error = {
            'type': 'string_type',
            'loc': [key],
            'msg': 'Input should be a valid string',
            'input': call.arguments[key],
        }
        attributes += [
            ('logfire.msg', f'invalid tool call: {call.name}'),
            ('gen_ai.tool.call.result', _compact([error])),
            ('pydantic_ai.tool.failure_stage', 'validation'),
            ('pydantic_ai.tool.retry.attempt', 1),
            ('pydantic_ai.tool.retry.cause', 'validation_error'),
            ('pydantic_ai.tool.retry.max_retries', 3),
        ]
    return PlannedSpan(
        name=f'execute_tool {call.name}',
        span_id=rng.getrandbits(64),
        parent_span_id=parent_id,
        start=start,
        end=end,
        attributes=tuple(attributes),
        status=status,
    )


def perturb(sequence: list[str], *, rate: float, seed: int) -> list[str]:
    """A copy of `sequence` with about `rate` of its steps each deleted, replaced, or preceded by an extra step.

    Used as the expected trajectory, so the longest common subsequence is long but not trivial.
    """
    rng = random.Random(seed)
    names = list(TOOLS)
    result: list[str] = []
    for step in sequence:
        roll = rng.random()
        if roll < rate:
            continue  # deleted
        if roll < 2 * rate:
            result.append(rng.choice(names))  # replaced
        elif roll < 3 * rate:
            result += [rng.choice(names), step]  # something inserted before it
        else:
            result.append(step)
    return result
